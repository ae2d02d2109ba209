export {
  receiverEnv,
  SHOPIFY_SECRET,
  shopifyDelivery,
  STRIPE_OLD_SECRET,
  STRIPE_SECRET,
  stripeDelivery,
  stripeEventOf,
  SW_NAME,
  SW_SECRET,
  type Delivery,
  type DeliveryOptions,
} from './deliveries.ts';
export { getStatus, post, type HttpResult } from './http.ts';
export { RECEIVER_ARGS, spawnReceiver, type SpawnedReceiver } from './process.ts';
