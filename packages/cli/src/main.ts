#!/usr/bin/env node
/**
 * `webhook-inbox <command>` (`npx webhook-inbox` in a team's project, `pnpm inbox` in this repository): the
 * operator CLI. Every command has --help; list commands take --json; exit codes:
 * 0 ok, 1 the operation failed, 2 wrong usage or missing configuration, 3 not found.
 */
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { loadDotEnv } from '@webhook-inbox/db/dotenv';
import type { DestinationsOptions, RemoteFlags } from './commands/destinations.ts';
import type { EventsOptions } from './commands/events.ts';
import type { ListenOptions } from './commands/listen.ts';
import type { FailuresOptions, StatsOptions } from './commands/operator.ts';
import type { PurgeCliOptions, ReconcileCliOptions } from './commands/ops.ts';
import type { ReplayCliOptions } from './commands/replay.ts';
import type { SendOptions } from './commands/send.ts';
import type { CreateTokenOptions } from './commands/tokens.ts';
import { createContext } from './context.ts';
import { EXIT, NotFoundError, UsageError } from './errors.ts';
import { RemoteError } from './remote.ts';
import type { ShopifySampleOptions, StripeSampleOptions } from './samples.ts';

loadDotEnv();
const context = createContext(process.env, process.env.INIT_CWD ?? process.cwd());

const positiveInt = (value: string) => {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('must be a positive integer');
  return n;
};

// Each command loads its module (and the inbox, pg, pg-boss behind it) when it runs: `--help` loads none.
const events = () => import('./commands/events.ts');
const ops = () => import('./commands/ops.ts');
const send = () => import('./commands/send.ts');
const tokens = () => import('./commands/tokens.ts');
const operator = () => import('./commands/operator.ts');
const destinations = () => import('./commands/destinations.ts');

// A command that works against a remote receiver's admin API as well as the database.
const URL_OPTION = new Option(
  '--url <url>',
  "a remote receiver's admin API (its management listener), with --token",
);
const TOKEN_OPTION = new Option(
  '--token <token>',
  'an API token for --url (better: WEBHOOK_INBOX_TOKEN, out of the process list)',
);

const program = new Command('webhook-inbox')
  .description('Operate webhook-inbox: inspect, replay and purge events; send signed sample events')
  .showHelpAfterError()
  .exitOverride();

program
  .command('events')
  .description('List events, newest first')
  .option('--provider <provider>', 'stripe, shopify, or a Standard Webhooks sender name')
  .addOption(
    new Option('--status <status>', 'event status').choices([
      'received',
      'processing',
      'processed',
      'failed',
      'dead',
    ]),
  )
  .option('--type <type>', 'event type or topic, e.g. checkout.session.completed')
  .option('--group <name>', "a consumer group: its events, and --status is the event's status in it")
  .option('--since <duration>', 'only events received within this window (90m, 24h, 3d) or since an ISO date')
  .option(
    '--search <text>',
    'an event id or its start, a bare provider id, a customer, an email, a shop, a repository, or a type',
  )
  .option('--limit <n>', 'page size (1-500)', positiveInt, 50)
  .option('--cursor <cursor>', 'continue from a previous page')
  .option('--json', 'machine-readable output', false)
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  .action(async (options: EventsOptions) => (await events()).events(context, options));

program
  .command('show')
  .description('Show one event with its effects and attempts')
  .argument('<provider>')
  .argument('<id>', 'event key (Stripe evt_..., Shopify shop:topic:event-id)')
  .option('--group <name>', 'a consumer group: its status of the event, and only its effects and attempts')
  .option('--json', 'machine-readable output', false)
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  .action(
    async (
      provider: string,
      id: string,
      options: { json: boolean; group?: string; url?: string; token?: string },
    ) => (await events()).show(context, provider, id, options),
  );

program
  .command('stats')
  .description('The backlog: events per unfinished status, per consumer group, and live queue jobs')
  .option('--group <name>', "only this consumer group's part: its events per status, its queues' jobs")
  .option('--json', 'machine-readable output', false)
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  .action(async (options: StatsOptions) => (await operator()).stats(context, options));

program
  .command('failures')
  .description(
    'Failing effects grouped by cause (consumer group, effect, normalized error), the most events first',
  )
  .option('--group <name>', 'only this consumer group')
  .option('--effect <name>', 'only this effect')
  .option(
    '--state <state>',
    'unresolved (open and acknowledged), open, acknowledged, resolved, all',
    'unresolved',
  )
  .option('--json', 'machine-readable output', false)
  .action(async (options: FailuresOptions) => (await operator()).failures(context, options));

const destinationsCommand = program
  .command('destinations')
  .description('Destinations: their state (active, paused, circuit open), success rate, latency and backlog')
  .option('--json', 'machine-readable output', false)
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  .action(async (options: DestinationsOptions) => (await destinations()).list(context, options));
destinationsCommand
  .command('pause')
  .description('Pause deliveries to a destination until it is resumed (audited)')
  .argument('<name>')
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  // `--url` and `--token` may come before the subcommand (the parent's) or after it.
  .action(async (name: string, _options: RemoteFlags, command: Command) =>
    (await destinations()).setPaused(context, name, true, command.optsWithGlobals<RemoteFlags>()),
  );
destinationsCommand
  .command('resume')
  .description('Resume deliveries to a destination, closing an open circuit (audited)')
  .argument('<name>')
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  // `--url` and `--token` may come before the subcommand (the parent's) or after it.
  .action(async (name: string, _options: RemoteFlags, command: Command) =>
    (await destinations()).setPaused(context, name, false, command.optsWithGlobals<RemoteFlags>()),
  );

program
  .command('operations')
  .description(
    "The console's bulk replays, and where their replayed events are now (processed, failing, dead)",
  )
  .argument('[id]', 'one operation')
  .option('--json', 'machine-readable output', false)
  .action(async (id: string | undefined, options: { json: boolean }) =>
    (await operator()).operations(context, id, options),
  );

program
  .command('migrate')
  .description(
    "Apply the inbox's migrations and the pg-boss schema as MIGRATION_DATABASE_URL's role (else DATABASE_URL's), granting DATABASE_URL's role",
  )
  .action(async () => (await import('./commands/migrate.ts')).migrate(context));

program
  .command('receiver')
  .description(
    'Run the receiver (webhooks on PORT, console and metrics on MANAGEMENT_PORT), configured by the environment',
  )
  .addHelpText(
    'after',
    '\nEnvironment: DATABASE_URL, a webhook secret (STRIPE_WEBHOOK_SECRET, ...), PORT, ADMIN_TOKEN, ...: docs/configuration.md.\n' +
      'Runs until SIGTERM or SIGINT (or until its parent exits: npx), then stops gracefully. Exit codes: 2 a configuration error, 1 failed to start.',
  )
  .action(async () => {
    (await import('./parent-exit.ts')).stopWhenOrphaned();
    await (await import('@webhook-inbox/receiver/main')).runReceiver();
  });

program
  .command('replay')
  .description('Put events back on the queue; only effects that have not completed run again')
  .argument('[provider]', 'replay one event: its provider ...')
  .argument('[id]', '... and its event key')
  .addOption(
    new Option('--status <status>', 'bulk: every event in this status').choices([
      'received',
      'processing',
      'processed',
      'failed',
      'dead',
    ]),
  )
  .option('--provider <provider>', 'bulk: only this provider')
  .option('--type <type>', 'bulk: only this event type')
  .option('--since <duration>', 'bulk: only events received within this window (24h, 3d)')
  .option(
    '--group <name>',
    "the consumer group whose effects run (default: the default group); bulk with --group and no --status: every event of the group's types in the range, those it never had included (a backfill)",
  )
  .option(
    '--effect <name>',
    'bulk, with --fingerprint: the events of one failure group (as `failures` lists it): this effect failing ...',
  )
  .option('--fingerprint <error>', "... with this normalized error (the failure group's fingerprint)")
  .option('--force-effect <name>', 'also re-run this completed effect (recorded as forced)')
  .option('--limit <n>', 'bulk: replay at most n events, oldest first (how many more remain is printed)')
  .option('--dry-run', 'list the effects that would run; change nothing', false)
  .option('--json', 'machine-readable output', false)
  .addOption(URL_OPTION)
  .addOption(TOKEN_OPTION)
  .action(async (provider: string | undefined, id: string | undefined, options: ReplayCliOptions) =>
    (await import('./commands/replay.ts')).replay(context, provider, id, options),
  );

program
  .command('listen')
  .description(
    "Forward a remote inbox's events (those the token may see) to a local URL, signed with Standard Webhooks; resumes after a dropped connection without losing or repeating one",
  )
  .requiredOption('--forward-to <url>', 'the local endpoint, e.g. http://localhost:3000/hooks')
  .option('--group <name>', 'only the event types this consumer group has effects for')
  .option('--events <patterns>', 'only these event types, comma-separated; * matches any run (invoice.*)')
  .addOption(
    new Option('--body <form>', "what is POSTed: the event's facts around its payload, or the payload alone")
      .choices(['envelope', 'raw'])
      .default('envelope'),
  )
  .option(
    '--secret <whsec>',
    'sign with this secret (better: WEBHOOK_INBOX_LISTEN_SECRET); default: a new one, printed',
  )
  .option('--url <url>', "the remote receiver's admin API (its management listener), with --token")
  .option('--token <token>', 'an API token for --url (better: WEBHOOK_INBOX_TOKEN, out of the process list)')
  .addHelpText(
    'after',
    '\nRuns until Ctrl-C or SIGTERM, then acknowledges what it forwarded and stops its listener (exit code 0).',
  )
  .action(async (options: ListenOptions) => (await import('./commands/listen.ts')).listen(context, options));

program
  .command('purge')
  .description('Retention: drop payloads and old event keys of finished (processed or dead) events')
  .requiredOption(
    '--older-than <duration>',
    'drop the payloads of finished events received before this, e.g. 30d (at least 3d, the retry window, unless --force)',
  )
  .option('--keys-older-than <duration>', 'delete event keys received before this (at least 7d)', '90d')
  .option(
    '--force',
    'allow --older-than under 3d (dead events within it can then no longer be replayed)',
    false,
  )
  .option('--dry-run', 'count what would be purged, per table; change nothing', false)
  .option('--json', 'machine-readable output', false)
  .addHelpText(
    'after',
    '\nExit codes: 0 purged (or counted, with --dry-run), 1 the purge failed, 2 a refused or invalid age.',
  )
  .action(async (options: PurgeCliOptions) => (await ops()).purge(context, options));

program
  .command('reconcile')
  .description("Ingest the events Stripe's Events API has and we never recorded (needs STRIPE_API_KEY)")
  .argument('<provider>', 'stripe')
  .option('--since <duration>', 'how far back to look (Stripe keeps 30 days)', '3d')
  .option('--dry-run', 'report what is missing, record nothing', false)
  .option('--json', 'machine-readable output', false)
  .action(async (provider: string, options: ReconcileCliOptions) =>
    (await ops()).reconcile(context, provider, options),
  );

const tokensCommand = program
  .command('tokens')
  .description('API tokens for the admin API and the remote CLI (on the database; each change audited)');
tokensCommand
  .command('create')
  .description('Create a token and print it, once')
  .argument('<name>', 'lower-case letters, digits, ".", "_", "-"; its audit actor is token:<name>')
  .addOption(
    new Option('--role <role>', 'what it may do')
      .choices(['viewer', 'operator', 'admin'])
      .makeOptionMandatory(),
  )
  .option(
    '--group <name>',
    'limit it to this consumer group (repeat for several); none: every group',
    (value: string, previous: string[] = []) => [...previous, value],
  )
  .option('--expires-in <days>', 'days until it stops working, 1 to 366 (e.g. 30d)', '90d')
  .option('--json', 'machine-readable output', false)
  .action(async (name: string, options: CreateTokenOptions) =>
    (await tokens()).createToken(context, name, options),
  );
tokensCommand
  .command('list')
  .description('Every token: role, groups, status, expiry, last use (never the token)')
  .option('--json', 'machine-readable output', false)
  .action(async (options: { json: boolean }) => (await tokens()).listTokens(context, options.json));
tokensCommand
  .command('revoke')
  .description('Revoke a token: refused from its next request on')
  .argument('<name>')
  .action(async (name: string) => (await tokens()).revokeToken(context, name));

const sendCommand = program
  .command('send')
  .description(
    'Sign a realistic sample event with the configured secret and POST it to the running receiver',
  );
sendCommand
  .command('stripe')
  .argument('<type>', 'checkout.session.completed | customer.subscription.created | .updated | .deleted')
  .option('--event-id <id>', 'reuse an event id (a redelivery)')
  .option('--customer <id>', 'Stripe customer id (default: a new one)')
  .option('--email <email>', 'customer email for checkout sessions')
  .option('--subscription <id>', 'subscription id')
  .option('--created <unix>', 'event created time, unix seconds', positiveInt)
  .option('--payload <file.json>', 'any event type: send this Stripe event (signed) instead of a sample')
  .option('--times <n>', 'deliver the same signed event n times', positiveInt, 1)
  .option('--url <url>', 'receiver base URL (default: the running pnpm start, or PORT)')
  .option('--json', 'machine-readable output', false)
  .action(async (type: string, o: StripeSampleOptions & SendOptions) => {
    const ok = await (await send()).sendStripe(context, type, o, o);
    if (!ok) process.exitCode = EXIT.failure;
  });
sendCommand
  .command('shopify')
  .argument(
    '<topic>',
    'orders/create | app/uninstalled | customers/data_request | customers/redact | shop/redact',
  )
  .option('--event-id <id>', 'reuse an event id (a redelivery)')
  .option('--shop <domain>', 'shop domain', 'dev-shop.myshopify.com')
  .option('--payload <file.json>', 'any topic: send this body (signed) instead of a sample')
  .option('--times <n>', 'deliver the same signed event n times', positiveInt, 1)
  .option('--url <url>', 'receiver base URL')
  .option('--json', 'machine-readable output', false)
  .action(async (topic: string, o: ShopifySampleOptions & SendOptions) => {
    const ok = await (await send()).sendShopify(context, topic, o, o);
    if (!ok) process.exitCode = EXIT.failure;
  });

sendCommand
  .command('source <name> <type>', { isDefault: true })
  .description(
    'any configured source: `send <source> <type>` (WEBHOOK_SOURCES_FILE, STANDARD_WEBHOOKS, <TYPE>_WEBHOOK_SECRET)',
  )
  .option('--times <n>', 'deliver the same signed event n times', positiveInt, 1)
  .option('--payload <file.json>', 'a catalogue source: send this body (signed) instead of the sample')
  .option(
    '--private-key <file.pem>',
    'discord, sendgrid, aws-sns, paypal: sign with this private key (the source holds the public half)',
  )
  .option(
    '--certificate-url <url>',
    "aws-sns, paypal: the URL of --private-key's certificate the message names",
  )
  .option('--url <url>', 'receiver base URL')
  .option('--json', 'machine-readable output', false)
  .action(async (name: string, type: string, o: SendOptions) => {
    const ok = await (await send()).sendSource(context, name, type, o);
    if (!ok) process.exitCode = EXIT.failure;
  });

try {
  await program.parseAsync(process.argv);
} catch (error) {
  process.exitCode = exitCodeFor(error);
} finally {
  await context.close();
}

function exitCodeFor(error: unknown): number {
  if (error instanceof CommanderError) {
    // --help and --version end here too, with code 0.
    return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
  }
  if (error instanceof UsageError || error instanceof NotFoundError || error instanceof RemoteError) {
    process.stderr.write(`error: ${error.message}\n`);
    return error.exitCode;
  }
  const message = error instanceof Error ? error.message : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
  process.stderr.write(`error: ${message}${cause}\n`);
  return EXIT.failure;
}
