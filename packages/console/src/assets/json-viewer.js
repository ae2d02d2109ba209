/* global document, navigator */
// The payload viewer's tools (views/json-viewer.ts renders the tree as <details>, readable without this file):
// Copy puts the payload's JSON on the clipboard, Expand all and Collapse all open or close every level.
(function () {
  'use strict';

  function setUp(root) {
    var tools = root.querySelector('.json-tools');
    if (!tools || root.hasAttribute('data-json-ready')) return;
    root.setAttribute('data-json-ready', '');
    tools.hidden = false;
    var status = root.querySelector('.json-copied');
    tools.addEventListener('click', function (event) {
      var action = event.target && event.target.getAttribute && event.target.getAttribute('data-json-action');
      if (action === 'expand' || action === 'collapse') {
        root.querySelectorAll('details.json-node').forEach(function (d) {
          d.open = action === 'expand';
        });
      } else if (action === 'copy') {
        var json = root.querySelector('template[data-json-source]').content.textContent;
        var done = function () {
          status.textContent = 'Copied';
        };
        if (navigator.clipboard && navigator.clipboard.writeText) {
          navigator.clipboard.writeText(json).then(done, function () {
            status.textContent = 'Copy refused by the browser';
          });
        } else {
          status.textContent = 'Copy is not available here';
        }
      }
    });
  }

  function setUpAll() {
    document.querySelectorAll('[data-json-viewer]').forEach(setUp);
  }
  document.addEventListener('DOMContentLoaded', setUpAll);
})();
