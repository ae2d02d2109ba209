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

  function draw() {
    document.querySelectorAll('.chart[data-series]').forEach(function (el) {
      var data = JSON.parse(el.getAttribute('data-series'));
      el.textContent = '';
      var series = [{}].concat(
        data.names.map(function (name, i) {
          var stroke = COLORS[name] || PALETTE[i % PALETTE.length];
          return { label: name, stroke: stroke, width: 2, points: { show: false } };
        }),
      );
      new uPlot(
        {
          width: Math.max(280, el.clientWidth),
          height: 220,
          series: series,
          scales: { x: { time: true } },
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
})();
