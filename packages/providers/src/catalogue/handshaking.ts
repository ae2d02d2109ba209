import { InvalidPayloadError } from '../errors.ts';
import type { HttpAnswer, Provider, Reception, SignedRequest } from '../types.ts';

/**
 * A provider whose requests are an event or a handshake (Slack, Zoom, Meta): the receiver calls `receive`;
 * `verify`, for callers that want one event, refuses a handshake as `invalid_payload`.
 */
export function handshakingProvider(
  name: string,
  receive: (request: SignedRequest, now: Date) => Reception,
  extra: { response?: HttpAnswer; acceptsGet?: boolean } = {},
): Provider {
  return {
    name,
    receive,
    verify(request, now) {
      const reception = receive(request, now);
      const [event] = reception.kind === 'events' ? reception.events : [];
      if (reception.kind === 'events' && reception.events.length === 1 && event !== undefined) return event;
      throw new InvalidPayloadError(`${name}: this request is a handshake or a batch, not one event`);
    },
    ...extra,
  };
}
