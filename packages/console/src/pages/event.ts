import { DEAD_LETTER_QUEUE, EVENTS_QUEUE, queuesOf } from '@webhook-inbox/inbox/queue';
import { ReplayError, replayEvent, type ReplayDeps, type ReplayResult } from '@webhook-inbox/inbox/replay';
import { effectRuns, pgbossJobs, webhookEventGroups, webhookEvents } from '@webhook-inbox/inbox/sql';
import { html } from 'hono/html';
import { audit, type ConsoleApp, type ConsoleContext, type ConsoleServices } from '../context.ts';
import { read } from '../db.ts';
import { ConsoleError } from '../errors.ts';
import { cliCommand, searchParams, utc } from '../views/format.ts';
import { csrfField, layout, statusBadge, type Html } from '../views/layout.ts';
import { eventHref, type EventRow } from './events.ts';

interface EventDetailRow extends EventRow {
  headers: Record<string, string>;
  payload: string | null;
}

interface EffectRunRow {
  effect: string;
  status: string;
  attempts: number;
  lastError: string | null;
  idempotencyKey: string;
  startedAt: Date | null;
  completedAt: Date | null;
  forcedAt: Date | null;
}

interface GroupRow {
  group: string;
  status: string;
  attempts: number;
  lastError: string | null;
  processedAt: Date | null;
}

interface JobRow {
  id: string;
  name: string;
  state: string;
  retryCount: number;
  retryLimit: number;
  createdOn: Date;
  startedOn: Date | null;
  completedOn: Date | null;
  startAfter: Date;
}

function eventKey(c: ConsoleContext): { provider: string; eventId: string } {
  const provider = c.req.query('provider') ?? '';
  const eventId = c.req.query('id') ?? '';
  if (!provider || !eventId) throw new ConsoleError('invalid_input', 'provider and id are required');
  return { provider, eventId };
}

async function formKey(c: ConsoleContext): Promise<{ provider: string; eventId: string; force: string }> {
  const form = await c.req.parseBody();
  const text = (key: string) => (typeof form[key] === 'string' ? form[key] : '');
  if (!text('provider') || !text('id'))
    throw new ConsoleError('invalid_input', 'provider and id are required');
  return { provider: text('provider'), eventId: text('id'), force: text('force') };
}

/**
 * One event: headers, payload, each effect's ledger row as a timeline, its pg-boss jobs, and the replay buttons
 * (one click for the unfinished effects; forcing a completed one goes through a confirmation page).
 */
export function eventPage(app: ConsoleApp, services: ConsoleServices): void {
  const replayDeps = async (): Promise<ReplayDeps> => {
    const effectsFor = await services.effectsFor();
    return { pool: services.pool, boss: services.boss, ...(effectsFor ? { effectsFor } : {}) };
  };

  app.get('/event', async (c) => {
    const { provider, eventId } = eventKey(c);
    const t = services.queryTimeoutMs;
    const [event] = await read<EventDetailRow>(
      services.pool,
      webhookEvents.selectEvent(provider, eventId, 'pretty'),
      t,
    );
    if (!event) throw new ConsoleError('not_found', `no ${provider} event ${eventId}`);
    const [runs, groups] = await Promise.all([
      read<EffectRunRow>(services.pool, effectRuns.selectEffectRuns(provider, eventId), t),
      read<GroupRow>(services.pool, webhookEventGroups.selectEventGroups(provider, eventId), t),
    ]);
    const queues = [EVENTS_QUEUE, DEAD_LETTER_QUEUE];
    for (const { group } of groups) queues.push(queuesOf(group).events, queuesOf(group).deadLetters);
    const jobs = await read<JobRow>(services.pool, pgbossJobs.selectEventJobs(queues, provider, eventId), t);
    const registered = (await services.effectsFor())?.(provider, event.type) ?? [];
    const notStarted = registered.filter((name) => !runs.some((r) => r.effect === name));
    const flash = c.req.query('replayed');
    return c.html(
      layout({
        base: services.base,
        title: `${provider} ${eventId}`,
        section: 'events',
        session: { who: c.get('session').who, csrf: c.get('csrf') },
        body: html`<h1 class="id">${provider} · ${eventId}</h1>
          ${flash ? html`<p class="notice" role="status">${flash}</p>` : ''} ${eventFacts(event, false)}
          <section aria-labelledby="h-replay">
            <h2 id="h-replay">Replay</h2>
            <form method="post" action="${services.base}/event/replay" class="inline">
              ${csrfField(c.get('csrf'))}
              <input type="hidden" name="provider" value="${provider}" />
              <input type="hidden" name="id" value="${eventId}" />
              <button type="submit">Replay unfinished effects</button>
            </form>
            <p class="hint">Runs again only the effects that have not completed. Same from a shell:</p>
            <pre class="cli"><code>${cliCommand('replay', provider, eventId)}</code></pre>
          </section>
          <section aria-labelledby="h-effects">
            <h2 id="h-effects">Effects</h2>
            ${effectsTimeline(services.base, event, runs, notStarted)}
          </section>
          ${groups.length ? groupsTable(provider, eventId, groups) : ''}
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
                : html`<pre class="payload" tabindex="0"><code>${event.payload}</code></pre>`
            }
            <pre class="cli"><code>${cliCommand('show', provider, eventId)}</code></pre>
          </section>`,
      }),
    );
  });

  // The effects alone: the event page polls them while the event is not settled.
  app.get('/event/effects', async (c) => {
    const { provider, eventId } = eventKey(c);
    const t = services.queryTimeoutMs;
    const [event] = await read<EventDetailRow>(
      services.pool,
      webhookEvents.selectEvent(provider, eventId, 'pretty'),
      t,
    );
    if (!event) throw new ConsoleError('not_found', `no ${provider} event ${eventId}`);
    const runs = await read<EffectRunRow>(services.pool, effectRuns.selectEffectRuns(provider, eventId), t);
    const registered = (await services.effectsFor())?.(provider, event.type) ?? [];
    const notStarted = registered.filter((name) => !runs.some((r) => r.effect === name));
    // The facts come along (swapped out of band): the header and the timeline always show the same read.
    return c.html(html`${effectsTimeline(services.base, event, runs, notStarted)}${eventFacts(event, true)}`);
  });

  // The confirmation for forcing a completed effect: says what runs again, from a dry run of the same replay.
  app.get('/event/force', async (c) => {
    const { provider, eventId } = eventKey(c);
    const effect = c.req.query('effect') ?? '';
    const plan = await replayOrRefuse(async () =>
      replayEvent(await replayDeps(), provider, eventId, { forceEffect: effect, dryRun: true }),
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
        session: { who: c.get('session').who, csrf: c.get('csrf') },
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

  app.post('/event/replay', async (c) => {
    const { provider, eventId, force } = await formKey(c);
    const result = await replayOrRefuse(async () =>
      replayEvent(await replayDeps(), provider, eventId, force ? { forceEffect: force } : {}),
    );
    await audit(services, c, force ? 'replay_forced' : 'replay', `${provider} ${eventId}`, {
      forced: result.forced,
      effects: result.effects,
      enqueued: result.enqueued,
    });
    services.logger.info(
      { provider, eventId, forced: result.forced, enqueued: result.enqueued, who: c.get('session').who },
      'console replay',
    );
    const message = result.enqueued
      ? `Replay queued: ${result.effects ? result.effects.join(', ') : 'the unfinished effects'} will run.`
      : 'Nothing to replay: every effect has completed.';
    return c.redirect(
      `${eventHref(services.base, provider, eventId)}&${searchParams({ replayed: message })}`,
      303,
    );
  });
}

async function replayOrRefuse(fn: () => Promise<ReplayResult>): Promise<ReplayResult> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof ReplayError) {
      throw new ConsoleError(error.code === 'not_found' ? 'not_found' : 'unknown_effect', error.message);
    }
    throw error;
  }
}

function planList(plan: ReplayResult): Html {
  if (!plan.effects) return html`<p>The worker's ledger decides which effects run.</p>`;
  return html`<p>Will run: ${plan.effects.length ? plan.effects.join(', ') : 'nothing'}.</p>`;
}

/**
 * The event's row: status, attempts, last error. The effects poll re-renders it with `outOfBand` (htmx's
 * `hx-swap-oob`), so it changes with the timeline rather than staying as the page was first served.
 */
function eventFacts(event: EventDetailRow, outOfBand: boolean): Html {
  return html`<dl class="facts" id="event-facts" ${outOfBand ? html`hx-swap-oob="true"` : ''}>
    <dt>Type</dt>
    <dd>${event.type}</dd>
    <dt>Status</dt>
    <dd>${statusBadge(event.status)}</dd>
    <dt>Received</dt>
    <dd>${utc(event.receivedAt)} (${event.source})</dd>
    <dt>Processed</dt>
    <dd>${utc(event.processedAt) || '-'}</dd>
    <dt>Attempts</dt>
    <dd>${event.attempts}</dd>
    ${
      event.lastError
        ? html`<dt>${event.status === 'processed' ? 'Error before it was processed' : 'Last error'}</dt>
            <dd class="error-text">${event.lastError}</dd>`
        : ''
    }
  </dl>`;
}

/**
 * The event in the other consumer groups: one row each, with the command that replays it for that group (the
 * status above and the replay button are the default group's).
 */
function groupsTable(provider: string, eventId: string, groups: GroupRow[]): Html {
  return html`<section aria-labelledby="h-groups">
    <h2 id="h-groups">Consumer groups</h2>
    <p class="hint">The status above is the default group's; each other group with effects for this type:</p>
    <table>
      <thead>
        <tr>
          <th scope="col">Group</th>
          <th scope="col">Status</th>
          <th scope="col">Attempts</th>
          <th scope="col">Processed</th>
          <th scope="col">Last error</th>
          <th scope="col">Replay from a shell</th>
        </tr>
      </thead>
      <tbody>
        ${groups.map(
          (g) =>
            html`<tr>
              <td class="id">${g.group}</td>
              <td>${statusBadge(g.status)}</td>
              <td>${g.attempts}</td>
              <td>${utc(g.processedAt) || '-'}</td>
              <td class="error-text">${g.lastError ?? ''}</td>
              <td><code>${cliCommand('replay', provider, eventId, '--group', g.group)}</code></td>
            </tr>`,
        )}
      </tbody>
    </table>
  </section>`;
}

/**
 * Each effect's ledger row as a timeline. While the event is not settled (processed or dead), the list reloads
 * itself every 2 seconds, so a replay is seen turning completed without reloading the page.
 */
function effectsTimeline(base: string, event: EventRow, runs: EffectRunRow[], notStarted: string[]): Html {
  const { provider, eventId } = event;
  const settled = event.status === 'processed' || event.status === 'dead';
  const polling = settled
    ? ''
    : html`hx-get="${base}/event/effects?${searchParams({ provider, id: eventId })}" hx-trigger="every 2s"
      hx-swap="outerHTML"`;
  const forceHref = (effect: string) =>
    `${base}/event/force?${searchParams({ provider, id: eventId, effect })}`;
  if (runs.length === 0 && notStarted.length === 0) {
    return html`<div id="effects" ${polling}><p class="empty">No effect has run yet.</p></div>`;
  }
  return html`<div id="effects" ${polling} aria-live="polite">
    <p class="hint">Event ${statusBadge(event.status)}</p>
    <ol class="timeline">
      ${[...runs].sort(inStartOrder).map(
        (r) =>
          html`<li class="effect status-${r.status}">
            <div class="effect-head">
              <strong>${r.effect}</strong> ${statusBadge(r.status)}
              <span>${r.attempts} attempt${r.attempts === 1 ? '' : 's'}</span>
              ${r.forcedAt ? html`<span class="badge forced">forced ${utc(r.forcedAt)}</span>` : ''}
            </div>
            <ul class="steps">
              ${r.startedAt ? html`<li><time>${utc(r.startedAt)}</time> started</li>` : ''}
              ${r.lastError ? html`<li class="error-text">last error: ${r.lastError}</li>` : ''}
              ${r.completedAt ? html`<li><time>${utc(r.completedAt)}</time> completed</li>` : ''}
            </ul>
            <p class="key">once-only key <code>${r.idempotencyKey}</code></p>
            ${
              r.status === 'completed'
                ? html`<a class="button secondary" href="${forceHref(r.effect)}"
                    >Force ${r.effect} to run again…</a
                  >`
                : ''
            }
          </li>`,
      )}
      ${notStarted.map(
        (name) =>
          html`<li class="effect">
            <div class="effect-head"><strong>${name}</strong> <span class="badge">not started</span></div>
          </li>`,
      )}
    </ol>
  </div>`;
}

function jobsTable(jobs: JobRow[]): Html {
  if (jobs.length === 0)
    return html`<p class="empty">
      No job left in pg-boss for this event (completed jobs are deleted after their retention).
    </p>`;
  return html`<div class="table-wrap">
    <table>
      <thead>
        <tr>
          <th scope="col">Queue</th>
          <th scope="col">State</th>
          <th scope="col">Retries</th>
          <th scope="col">Created</th>
          <th scope="col">Started</th>
          <th scope="col">Finished</th>
          <th scope="col">Next try</th>
        </tr>
      </thead>
      <tbody>
        ${jobs.map(
          (j) =>
            html`<tr>
              <td>${j.name}</td>
              <td>${statusBadge(j.state)}</td>
              <td class="num">${j.retryCount} / ${j.retryLimit}</td>
              <td class="nowrap">${utc(j.createdOn)}</td>
              <td class="nowrap">${utc(j.startedOn)}</td>
              <td class="nowrap">${utc(j.completedOn)}</td>
              <td class="nowrap">${j.state === 'retry' || j.state === 'created' ? utc(j.startAfter) : ''}</td>
            </tr>`,
        )}
      </tbody>
    </table>
  </div>`;
}

/** The order effects started in; those not started yet last, by name. */
function inStartOrder(a: EffectRunRow, b: EffectRunRow): number {
  const started = (a.startedAt?.getTime() ?? Infinity) - (b.startedAt?.getTime() ?? Infinity);
  return started || (a.effect < b.effect ? -1 : a.effect > b.effect ? 1 : 0);
}
