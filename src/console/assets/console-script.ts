/**
 * The console's one script, served as /console/assets/console.<hash>.js (assets/served-assets.ts) (a file, not inline, so the
 * Content-Security-Policy allows no inline script at all). It draws charts with uPlot from
 * the data the server put in data-chart, and refreshes the parts of a page marked
 * data-refresh while they say something is still moving (a rebuild's progress).
 */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c'];

  // Bars are centred on their x, so the scale reaches half a step past the first and last
  // (today's bar is whole, not clipped at the edge); two series of bars stand side by side.
  function barPaths(seriesCount, index) {
    if (seriesCount === 2) return uPlot.paths.bars({ size: [0.35, 24], align: index === 0 ? -1 : 1 });
    return uPlot.paths.bars({ size: [0.6 / Math.max(1, seriesCount), 40] });
  }

  function chartWidth(el) {
    return Math.max(280, el.clientWidth || 640);
  }

  function drawChart(el) {
    var spec;
    try { spec = JSON.parse(el.getAttribute('data-chart')); } catch (e) { return; }
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    var step = spec.x.length > 1 ? spec.x[1] - spec.x[0] : 1;
    var opts = {
      width: chartWidth(el),
      height: spec.height || 220,
      scales: { x: spec.bars
        ? { time: spec.time !== false, range: function (u, min, max) { return [min - step / 2, max + step / 2]; } }
        : { time: spec.time !== false } },
      axes: [{}, { size: 70, values: spec.money ? function (u, ticks) { return ticks.map(function (t) { return '$' + (t / 100).toFixed(2); }); } : undefined }],
      series: [{}].concat(spec.series.map(function (s, i) {
        return { label: s.label, stroke: COLORS[i % COLORS.length], width: 2,
                 fill: spec.fill || spec.bars ? COLORS[i % COLORS.length] + (spec.bars ? '' : '22') : undefined,
                 paths: spec.bars ? barPaths(spec.series.length, i) : undefined, points: { show: !spec.bars && (spec.points || spec.x.length < 40) } };
      })),
    };
    el.textContent = '';
    el.chart = new uPlot(opts, data, el);
    el.setAttribute('data-drawn', String(spec.x.length));
  }

  function drawCharts(root) {
    Array.prototype.forEach.call(root.querySelectorAll('[data-chart]'), drawChart);
  }

  // A chart follows its box's width when the window changes size.
  function resizeCharts() {
    Array.prototype.forEach.call(document.querySelectorAll('[data-chart]'), function (el) {
      if (el.chart) el.chart.setSize({ width: chartWidth(el), height: el.chart.height });
    });
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
    var resizing;
    window.addEventListener('resize', function () {
      focusWideTables();
      clearTimeout(resizing);
      resizing = setTimeout(resizeCharts, 100);
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-refresh]'), refresh);
    Array.prototype.forEach.call(document.querySelectorAll('form[data-confirm]'), function (form) {
      form.addEventListener('submit', function (event) {
        if (!window.confirm(form.getAttribute('data-confirm'))) event.preventDefault();
      });
    });
  });
})();
`;
