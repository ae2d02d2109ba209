import type { Provider, Reception, SignedRequest, VerifiedEvent } from '../types.ts';

// A catalogue source may be named otherwise than its type (`github-acme`); its events say which type they are of
// (`VerifiedEvent.sourceType`), so what is keyed by type (the subject) finds them. A source named after its type is
// returned as it is: its events' provider is their type, and its hot path gains nothing.

function stamp(type: string, event: VerifiedEvent): VerifiedEvent {
  event.sourceType = type;
  return event;
}

function stampAll(type: string, reception: Reception): Reception {
  if (reception.kind === 'events') for (const event of reception.events) stamp(type, event);
  return reception;
}

/** The provider, its events marked with the catalogue type when its name is another. */
export function withSourceType(type: string, provider: Provider): Provider {
  if (provider.name === type) return provider;
  const receive = provider.receive?.bind(provider);
  const receiveAsync = provider.receiveAsync?.bind(provider);
  return {
    ...provider,
    verify: (request: SignedRequest, now: Date) => stamp(type, provider.verify(request, now)),
    ...(receive && { receive: (request: SignedRequest, now: Date) => stampAll(type, receive(request, now)) }),
    ...(receiveAsync && {
      receiveAsync: async (request: SignedRequest, now: Date) =>
        stampAll(type, await receiveAsync(request, now)),
    }),
  };
}
