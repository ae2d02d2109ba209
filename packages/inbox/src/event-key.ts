/** An event's identity: its provider and the provider's event id (`webhook_events`' primary key). */
export interface EventKey {
  provider: string;
  eventId: string;
}

/**
 * A map key from several strings (an event key's parts, with an effect or a type), NUL-separated: PostgreSQL text
 * never holds NUL, so ('a:b', 'c') and ('a', 'b:c') never collide, and keys sort as their parts do.
 *
 * @example
 * keyOf(event.provider, event.eventId); // 'stripe\0evt_1'
 */
export function keyOf(...parts: string[]): string {
  return parts.join('\0');
}
