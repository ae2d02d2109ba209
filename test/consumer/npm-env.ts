import path from 'node:path';

/**
 * The environment of the npm a consumer test runs: a cache of its own under the test's work folder, so no other
 * npm on the machine (another test file, a developer's install, a second CI run) shares its cache with it (npm
 * processes sharing one cache were seen to stall for good), and a deadline per registry request, so a request
 * that stalls is retried rather than waited on.
 */
export function npmEnv(work: string): NodeJS.ProcessEnv {
  return {
    npm_config_cache: path.join(work, 'npm-cache'),
    npm_config_fetch_timeout: '60000',
    npm_config_fetch_retries: '4',
  };
}
