import { DEAD_LETTER_QUEUE, EVENTS_QUEUE, queuesOf } from '@webhook-inbox/inbox/queue';
import {
  completers,
  type AttemptRow,
  type EffectRunRow,
  type EventGroupRow,
} from '@webhook-inbox/inbox/event-store';
import { replayEvent, type ReplayResult } from '@webhook-inbox/operator/replay';
import { effectAttempts, effectRuns, webhookEventGroups, webhookEvents } from '@webhook-inbox/inbox/sql';
import { pgbossJobs } from '@webhook-inbox/operator/sql';
import { html } from 'hono/html';
import { allowed } from '../auth/permissions.ts';
import { type ConsoleApp, type ConsoleContext, type ConsoleServices, pageSession } from '../context.ts';
import { read } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { attemptsSection } from '../views/event-attempts.ts';
import { effectsTimeline } from '../views/event-effects.ts';
import { eventFacts, type EventDetailRow } from '../views/event-facts.ts';
import { groupsSection } from '../views/event-groups.ts';
import { MASKED, masked, maskRow } from '../masking.ts';
import { coversGroup } from '@webhook-inbox/operator/access/roles';
import { effectRoutes } from '@webhook-inbox/inbox/sql';
import { DEFAULT_GROUP } from '@webhook-inbox/inbox/queue';
import { jobsTable } from '../views/event-jobs.ts';
import { jsonViewer } from '../views/json-viewer.ts';
import { cliCommand, eventHref, utc } from '../views/format.ts';
import { csrfField, layout, type Html } from '../views/layout.ts';
import { eventReplayAction, replayDeps, replayOrRefuse } from './event-replay.ts';
import { actionGroup, visibleEvent } from '../scope.ts';

function eventKey(c: ConsoleContext): { provider: string; eventId: string } {
  const provider = c.req.query('provider') ?? '';
  const eventId = c.req.query('id') ?? '';
  if (!provider || !eventId) throw new ConsoleError('invalid_input', 'provider and id are required');
  return { provider, eventId };
}

/**
 * One event: headers, payload, each effect's ledger row as a timeline, its pg-boss jobs, and the replay buttons
 * (one click for the unfinished effects; forcing a completed one goes through a confirmation page).
 */
export function eventPage(app: ConsoleApp, services: ConsoleServices): void {
  app.get('/event', async (c) => {
    const { provider, eventId } = eventKey(c);
    const [{ event, runs, groups, jobs, completedBy, notStarted, shown, own }, allAttempts] =
      await Promise.all([
        readEffects(c, services, provider, eventId),
        read<AttemptRow>(
          services.pool,
          effectAttempts.selectAttempts(provider, eventId),
          services.queryTimeoutMs,
        ),
      ]);
    const isMasked = masked(c, services);
    const attempts = allAttempts
      .filter((a) => shown(a.effect))
      .map((a) => (isMasked && a.error ? { ...a, error: MASKED } : a));
    const flash = c.req.query('replayed');
    const forms = { base: services.base, csrf: c.get('csrf'), canReplay: allowed(c, 'replay') };
    return c.html(
      layout({
        base: services.base,
        title: `${provider} ${eventId}`,
        section: 'events',
        session: pageSession(c),
        body: html`<h1 class="id">${provider} · ${eventId}</h1>
          ${flash ? html`<p class="notice" role="status">${flash}</p>` : ''} ${eventFacts(event, false, own)}
          ${groupsSection(forms, provider, eventId, groups)}
          <section aria-labelledby="h-effects">
            <h2 id="h-effects">Effects</h2>
            ${effectsTimeline(services.base, event, runs, notStarted, {
              canForce: allowed(c, 'force'),
              completedBy,
            })}
          </section>
          <section aria-labelledby="h-attempts">
            <h2 id="h-attempts">Attempts</h2>
            ${attemptsSection(services.base, { provider, eventId }, attempts, {
              a: c.req.query('a'),
              b: c.req.query('b'),
            })}
          </section>
          <section aria-labelledby="h-jobs">
            <h2 id="h-jobs">Queue jobs</h2>
            ${jobsTable(jobs)}
          </section>
          <section aria-labelledby="h-headers">
            <h2 id="h-headers">Headers</h2>
            ${
              Object.keys(event.headers).length
                ? html`<dl class="facts">
                    ${Object.entries(event.headers).map(
                      ([k, v]) =>
                        html`<dt>${k}</dt>
                          <dd class="id">${v}</dd>`,
                    )}
                  </dl>`
                : html`<p class="empty">No headers kept.</p>`
            }
          </section>
          <section aria-labelledby="h-payload">
            <h2 id="h-payload">Payload</h2>
            ${
              event.payload === null
                ? html`<p class="empty">Purged by retention.</p>`
                : !allowed(c, 'read_payload')
                  ? html`<p class="empty masked">
                      Masked: the ${c.get('principal').role} role does not see payloads.
                    </p>`
                  : jsonViewer(event.payload)
            }
            <pre class="cli"><code>${cliCommand('show', provider, eventId)}</code></pre>
          </section>`,
      }),
    );
  });

  // The effects alone: the event page polls them while the event is not settled.
  app.get('/event/effects', async (c) => {
    const { provider, eventId } = eventKey(c);
    const { event, runs, jobs, completedBy, notStarted, own } = await readEffects(
      c,
      services,
      provider,
      eventId,
    );
    // The facts and the jobs come along (swapped out of band): the page always shows one read.
    return c.html(
      html`${effectsTimeline(services.base, event, runs, notStarted, {
        canForce: allowed(c, 'force'),
        completedBy,
      })}${eventFacts(event, true, own)}${jobsTable(jobs, true)}`,
    );
  });

  // The confirmation for forcing a completed effect: says what runs again, from a dry run of the same replay.
  app.get('/event/force', async (c) => {
    const { provider, eventId } = eventKey(c);
    const effect = c.req.query('effect') ?? '';
    await visibleEvent(services, c.get('principal'), provider, eventId);
    actionGroup(c, DEFAULT_GROUP);
    const plan = await replayOrRefuse(async () =>
      replayEvent(await replayDeps(services), provider, eventId, { forceEffect: effect, dryRun: true }),
    );
    const [run] = (
      await read<EffectRunRow>(
        services.pool,
        effectRuns.selectEffectRuns(provider, eventId),
        services.queryTimeoutMs,
      )
    ).filter((r) => r.effect === effect);
    return c.html(
      layout({
        base: services.base,
        title: `Force ${effect}`,
        section: 'events',
        session: pageSession(c),
        body: html`<h1>Run ${effect} again?</h1>
          <p class="warning" role="alert">
            <strong>${effect}</strong> completed${run?.completedAt ? html` at ${utc(run.completedAt)}` : ''}
            for ${provider} ${eventId}. Forcing it runs it once more: whatever it does outside this database
            (an email sent, an API called) happens again. Its once-only key
            <code>${run?.idempotencyKey ?? ''}</code> is released so that it can.
          </p>
          ${planList(plan)}
          <form method="post" action="${services.base}/event/replay" class="inline">
            ${csrfField(c.get('csrf'))}
            <input type="hidden" name="provider" value="${provider}" />
            <input type="hidden" name="id" value="${eventId}" />
            <input type="hidden" name="force" value="${effect}" />
            <button type="submit" class="danger">Yes, run ${effect} again</button>
            <a href="${eventHref(services.base, provider, eventId)}">Cancel</a>
          </form>
          <pre
            class="cli"
          ><code>${cliCommand('replay', provider, eventId, '--force-effect', effect)}</code></pre>`,
      }),
    );
  });

  eventReplayAction(app, services);
}

/**
 * What the page and its polled effects both show: the event, its effects (run, and registered but not started),
 * the events that completed some of them, its status in each consumer group and its jobs, as far as the
 * principal may see them (a principal limited to groups: their effects and rows only), masked for a masked role.
 */
async function readEffects(c: ConsoleContext, services: ConsoleServices, provider: string, eventId: string) {
  const t = services.queryTimeoutMs;
  const principal = c.get('principal');
  await visibleEvent(services, principal, provider, eventId);
  const [found] = await read<EventDetailRow>(
    services.pool,
    webhookEvents.selectEvent(provider, eventId, 'pretty'),
    t,
  );
  if (!found) throw new ConsoleError('not_found', `no ${provider} event ${eventId}`);
  const own = coversGroup(principal, DEFAULT_GROUP);
  const event = maskRow(c, services, own ? found : { ...found, lastError: null });
  const [allRuns, otherGroups, effects] = await Promise.all([
    read<EffectRunRow>(services.pool, effectRuns.selectEffectRuns(provider, eventId), t),
    read<EventGroupRow>(services.pool, webhookEventGroups.selectEventGroups(provider, eventId), t),
    principal.groups === null
      ? undefined
      : read<{ effect: string }>(
          services.pool,
          effectRoutes.selectGroupsEffects(provider, found.type, principal.groups),
          t,
        ),
  ]);
  const visible = effects && new Set(effects.map((row) => row.effect));
  const shown = (effect: string) => visible === undefined || visible.has(effect);
  const runs = allRuns.filter((r) => shown(r.effect)).map((r) => maskRow(c, services, r));
  const defaultRow: EventGroupRow = {
    group: DEFAULT_GROUP,
    status: found.status,
    attempts: found.attempts,
    lastError: found.lastError,
    processedAt: found.processedAt,
  };
  const groups = [defaultRow, ...otherGroups]
    .filter((g) => coversGroup(principal, g.group))
    .map((g) => maskRow(c, services, g));
  const [jobs, completedBy] = await Promise.all([
    eventJobs(services, provider, eventId, groups),
    completers((statement) => read(services.pool, statement, t), provider, eventId, runs),
  ]);
  const registered = own ? ((await services.effectsFor())?.(provider, found.type) ?? []) : [];
  const notStarted = registered.filter((name) => !runs.some((r) => r.effect === name));
  return { event, runs, groups, jobs, completedBy, notStarted, shown, own };
}

/** The event's jobs in every queue it can be in: the default group's and each other group's. */
function eventJobs(
  services: ConsoleServices,
  provider: string,
  eventId: string,
  groups: EventGroupRow[],
): Promise<pgbossJobs.EventJobRow[]> {
  const queues: string[] = [];
  for (const { group } of groups) {
    if (group === DEFAULT_GROUP) queues.push(EVENTS_QUEUE, DEAD_LETTER_QUEUE);
    else queues.push(queuesOf(group).events, queuesOf(group).deadLetters);
  }
  return read<pgbossJobs.EventJobRow>(
    services.pool,
    pgbossJobs.selectEventJobs(queues, provider, eventId),
    services.queryTimeoutMs,
  );
}

function planList(plan: ReplayResult): Html {
  if (!plan.effects) return html`<p>The worker's ledger decides which effects run.</p>`;
  return html`<p>Will run: ${plan.effects.length ? plan.effects.join(', ') : 'nothing'}.</p>`;
}
