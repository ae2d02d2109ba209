/* global document, uPlot */
// The overview's charts: uPlot (served from its npm package) draws each `.chart` element from the series the
// server rendered into its `data-series` attribute, on load and again each time htmx swaps the figures in.
// No inline script (the Content-Security-Policy forbids it); the table under each chart holds the same numbers.
(function () {
  'use strict';
  var COLORS = {
    accepted: '#1a7f37',
    duplicate: '#0b5cad',
    refused: '#cf222e',
    'not recorded': '#8250df',
    processed: '#1a7f37',
    failed: '#cf222e',
    dead: '#82071e',
    waiting: '#9a6700',
    running: '#0b5cad',
    'oldest waiting': '#9a6700',
  };
  // Series named at run time (effects failing, by name) take these in turn.
  var PALETTE = ['#0b5cad', '#cf222e', '#1a7f37', '#9a6700', '#8250df', '#bc4c00', '#1b7c83', '#82071e'];

  // One number format across the console (views/format.ts `count`): 12,345.
  function count(n) {
    return n == null ? '-' : Number(n).toLocaleString('en-US');
  }
  function pad(n) {
    return (n < 10 ? '0' : '') + n;
  }
  // Times in UTC, 24-hour, as every other time in the console.
  function clock(date, seconds) {
    return (
      pad(date.getUTCHours()) +
      ':' +
      pad(date.getUTCMinutes()) +
      (seconds ? ':' + pad(date.getUTCSeconds()) : '')
    );
  }
  function day(date) {
    return pad(date.getUTCMonth() + 1) + '-' + pad(date.getUTCDate());
  }
  function timeTicks(u, splits) {
    var span = splits.length > 1 ? splits[splits.length - 1] - splits[0] : 0;
    return splits.map(function (ts) {
      var d = new Date(ts * 1000);
      if (span > 2 * 86400) return day(d);
      return span > 86400 ? day(d) + ' ' + clock(d) : clock(d);
    });
  }
  // The y axis is as wide as its longest label (uPlot's default fits about five characters: 10,000 was clipped).
  function yAxisSize(u, values) {
    var longest = 0;
    (values || []).forEach(function (v) {
      longest = Math.max(longest, String(v).length);
    });
    return Math.max(40, longest * 8 + 18);
  }

  function draw() {
    document.querySelectorAll('.chart[data-series]').forEach(function (el) {
      var data = JSON.parse(el.getAttribute('data-series'));
      el.textContent = '';
      var series = [{}].concat(
        data.names.map(function (name, i) {
          var stroke = COLORS[name] || PALETTE[i % PALETTE.length];
          return {
            label: name,
            stroke: stroke,
            width: 2,
            points: { show: false },
            value: function (u, v) {
              return count(v);
            },
          };
        }),
      );
      series[0] = {
        value: function (u, ts) {
          if (ts == null) return '-';
          var d = new Date(ts * 1000);
          return d.getUTCFullYear() + '-' + day(d) + ' ' + clock(d) + ' UTC';
        },
      };
      new uPlot(
        {
          width: Math.max(280, el.clientWidth),
          height: 220,
          series: series,
          scales: { x: { time: true } },
          axes: [
            { values: timeTicks },
            {
              size: yAxisSize,
              values: function (u, splits) {
                return splits.map(count);
              },
            },
          ],
          // Every time in the console is UTC, as the filters take it.
          tzDate: function (ts) {
            return uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC');
          },
        },
        [data.x].concat(data.values),
        el,
      );
    });
  }

  document.addEventListener('DOMContentLoaded', draw);
  document.addEventListener('htmx:afterSettle', draw);

  // A refresh that fails (the database down, the console unreachable) leaves the figures as they were: a banner
  // says so, with the time of the last good data, until a refresh succeeds again.
  var lastGood = new Date();
  function banner(target) {
    var found = document.querySelector('[data-stale-banner]');
    if (found || !target) return found;
    var el = document.createElement('p');
    el.className = 'error stale';
    el.setAttribute('role', 'alert');
    el.setAttribute('data-stale-banner', '');
    target.parentNode.insertBefore(el, target);
    return el;
  }
  function reason(detail) {
    var xhr = detail && detail.xhr;
    if (!xhr || !xhr.status) return 'the console did not answer';
    try {
      var body = JSON.parse(xhr.responseText);
      if (body && body.error && body.error.message) return body.error.message + ' (HTTP ' + xhr.status + ')';
    } catch {
      // not JSON: the status says enough
    }
    return 'HTTP ' + xhr.status;
  }
  function failed(event) {
    if (!event.detail || !event.detail.elt || !event.detail.elt.hasAttribute('hx-trigger')) return;
    var el = banner(event.detail.elt);
    el.textContent =
      'Refresh failed at ' +
      clock(new Date(), true) +
      ' UTC: ' +
      reason(event.detail) +
      '. These figures are from ' +
      clock(lastGood, true) +
      ' UTC, the last good refresh; retrying every 5 seconds.';
  }
  document.addEventListener('htmx:responseError', failed);
  document.addEventListener('htmx:sendError', failed);
  document.addEventListener('htmx:afterRequest', function (event) {
    if (!event.detail || !event.detail.successful) return;
    lastGood = new Date();
    var el = document.querySelector('[data-stale-banner]');
    if (el) el.remove();
  });
})();
