/**
 * The console's one script, served as /console/assets/console.<hash>.js (assets/served-assets.ts) (a file, not inline, so the
 * Content-Security-Policy allows no inline script at all). It draws charts with uPlot from
 * the data the server put in data-chart, and refreshes the parts of a page marked
 * data-refresh while they say something is still moving (a rebuild's progress).
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c'];

  function drawChart(el) {
    var spec;
    try { spec = JSON.parse(el.getAttribute('data-chart')); } catch (e) { return; }
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    var width = Math.max(320, el.clientWidth || 640);
    var opts = {
      width: width,
      height: spec.height || 220,
      scales: { x: { time: spec.time !== false } },
      axes: [{}, { size: 70, values: spec.money ? function (u, ticks) { return ticks.map(function (t) { return '$' + (t / 100).toFixed(2); }); } : undefined }],
      series: [{}].concat(spec.series.map(function (s, i) {
        return { label: s.label, stroke: COLORS[i % COLORS.length], width: 2, fill: spec.fill ? COLORS[i % COLORS.length] + '22' : undefined,
                 paths: spec.bars ? uPlot.paths.bars({ size: [0.6, 40] }) : undefined, points: { show: spec.points || spec.x.length < 40 } };
      })),
    };
    el.textContent = '';
    new uPlot(opts, data, el);
    el.setAttribute('data-drawn', String(spec.x.length));
  }

  function drawCharts(root) {
    Array.prototype.forEach.call(root.querySelectorAll('[data-chart]'), drawChart);
  }

  // On a narrow window a wide table scrolls in its own box (the style sheet); only then is it
  // a tab stop, so the keyboard can scroll it. On a wide window it is not one more stop.
  function focusWideTables() {
    Array.prototype.forEach.call(document.querySelectorAll('table.panel'), function (table) {
      if (table.scrollWidth > table.clientWidth) table.setAttribute('tabindex', '0');
      else table.removeAttribute('tabindex');
    });
  }

  function refresh(el) {
    var url = el.getAttribute('data-refresh');
    setTimeout(function () {
      fetch(url, { headers: { accept: 'text/html', 'x-console-fragment': '1' }, credentials: 'same-origin' })
        .then(function (res) { return res.ok ? res.text() : Promise.reject(res.status); })
        .then(function (text) {
          var next = document.createElement('div');
          next.innerHTML = text;
          var fresh = next.firstElementChild;
          if (!fresh) return;
          el.replaceWith(fresh);
          drawCharts(fresh);
          focusWideTables();
          if (fresh.getAttribute('data-refresh')) refresh(fresh);
        })
        .catch(function () { refresh(el); });
    }, Number(el.getAttribute('data-refresh-ms') || 1000));
  }

  document.addEventListener('DOMContentLoaded', function () {
    drawCharts(document);
    focusWideTables();
    window.addEventListener('resize', focusWideTables);
    Array.prototype.forEach.call(document.querySelectorAll('[data-refresh]'), refresh);
    Array.prototype.forEach.call(document.querySelectorAll('form[data-confirm]'), function (form) {
      form.addEventListener('submit', function (event) {
        if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
      });
    });
  });
})();
`;
