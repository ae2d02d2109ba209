import { DEFAULT_GROUP } from '@webhook-inbox/db/statuses';
import { errorLine } from '@webhook-inbox/inbox/error-text';
import { isDestinationAlert, normalizeErrorMessage, type Alert } from './model.ts';

/** A link an alert carries: what it opens, and where. */
export interface AlertLink {
  label: string;
  url: string;
}

/**
 * The console pages an alert links to, under `consoleUrl` (`CONSOLE_PUBLIC_URL`, no trailing `/`): an event's page,
 * and, when the alert names its effect, its failure group's (the group, the effect and the normalized error, as
 * `sql/failure-groups.ts` keys it); a destination's alert, to the destination's page. A signature alert links to no
 * event. The URLs are the console's routes (`/console/event`, `/console/failures/group`, `/console/destinations/<name>`).
 *
 * @example
 * consoleLinks(alert, 'https://inbox.example.com/console')
 * // [{ label: 'Event', url: 'https://inbox.example.com/console/event?provider=stripe&id=evt_1' }, ...]
 */
export function consoleLinks(alert: Alert, consoleUrl: string): AlertLink[] {
  if (alert.kind === 'signature_failures') return [];
  if (isDestinationAlert(alert)) {
    return [
      { label: 'Destination', url: `${consoleUrl}/destinations/${encodeURIComponent(alert.destination)}` },
    ];
  }
  const links: AlertLink[] = [
    {
      label: 'Event',
      url: `${consoleUrl}/event?${new URLSearchParams({ provider: alert.provider, id: alert.eventId }).toString()}`,
    },
  ];
  if (alert.effect) {
    const key = {
      group: alert.group ?? DEFAULT_GROUP,
      effect: alert.effect,
      fingerprint: normalizeErrorMessage(errorLine(alert.error)),
    };
    links.push({
      label: 'Failure group',
      url: `${consoleUrl}/failures/group?${new URLSearchParams(key).toString()}`,
    });
  }
  return links;
}
