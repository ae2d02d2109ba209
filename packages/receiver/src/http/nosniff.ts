import type { MiddlewareHandler } from 'hono';

const NAME = 'X-Content-Type-Options';

/**
 * `X-Content-Type-Options: nosniff` on every answer of a listener. A handshake echoes text the request chose (Meta's
 * `hub.challenge`, Graph's `validationToken`): a browser led to that URL must take it as the type it is sent as,
 * never sniff it into HTML or script. Set before the handler, so the answers built on the context carry it at no
 * cost; an answer built elsewhere (a sub-app's own `Response`) gets it after.
 */
export const noSniff: MiddlewareHandler = async (c, next) => {
  c.header(NAME, 'nosniff');
  await next();
  if (!c.res.headers.has(NAME)) c.header(NAME, 'nosniff');
};
