/**
 * Destinations: HTTP endpoints that receive the inbox's verified, deduplicated events, declared in a file
 * (`WEBHOOK_DESTINATIONS_FILE`), signed with Standard Webhooks, delivered at least once and never again after a
 * 2xx was recorded, on each destination's own queue. See docs/destinations.md.
 */
export {
  DEFAULT_RETRY_SCHEDULE_SECONDS,
  DestinationsFileError,
  loadDestinationsFile,
  parseDestinations,
  type BodyFilter,
  type Destination,
  type EventSelector,
} from './config.ts';
export {
  createDestinations,
  destinationQueue,
  type Destinations,
  type DestinationsOptions,
} from './dispatcher.ts';
export {
  bodyOf,
  destinationEffect,
  DELIVERY_OUTCOMES,
  type DeliveryJob,
  type DeliveryObserver,
  type DeliveryOutcome,
} from './delivery.ts';
export { isRestrictedAddress, RestrictedAddressError } from './address-policy.ts';
export { matches, type MatchableEvent } from './match.ts';
export { signDelivery, type SignatureHeaders } from './signature.ts';
export {
  send,
  parseRetryAfter,
  EXCERPT_BYTES,
  type OutboundRequest,
  type OutboundResult,
} from './outbound.ts';
export type { DestinationStateRow } from '../sql/destination-states.ts';
