/* global document */
// The lists' "Replay selected" (pages/replay-selected.ts renders a checkbox per row, usable without this file):
// the heading's box ticks or clears every row of the page, and the form says how many are ticked.
(function () {
  'use strict';

  function setUp() {
    var form = document.getElementById('replay-selected');
    if (!form) return;
    var all = document.querySelector('[data-select-all]');
    var status = form.querySelector('[data-selected-count]');
    var boxes = function () {
      return Array.prototype.slice.call(
        document.querySelectorAll('input[name="event"][form="replay-selected"]'),
      );
    };
    var update = function () {
      var ticked = boxes().filter(function (box) {
        return box.checked;
      }).length;
      status.textContent = ticked === 0 ? '' : ticked + ' selected';
      if (all) {
        all.checked = ticked > 0 && ticked === boxes().length;
        all.indeterminate = ticked > 0 && ticked < boxes().length;
      }
    };
    if (all) {
      all.hidden = false;
      all.addEventListener('change', function () {
        boxes().forEach(function (box) {
          box.checked = all.checked;
        });
        update();
      });
    }
    document.addEventListener('change', function (event) {
      if (event.target && event.target.name === 'event') update();
    });
    update();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
})();
