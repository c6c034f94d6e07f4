#include "svg_script.h"

namespace rbt::profile {

const char *const kFlamegraphStyle = R"CSS(
text { font-family: monospace; font-size: 12px; fill: #000; }
g.f text { pointer-events: none; }
g.f:hover rect { stroke: #000; stroke-width: 0.5; cursor: pointer; }
g.f.anc rect { opacity: 0.5; }
g.hide { display: none; }
.ctl { cursor: pointer; fill: #2050a0; }
.ctl.off { display: none; }
#title { font-size: 16px; }
)CSS";

// Layout data lives on each frame's <g>: data-x (start, in value units), data-w (its value),
// data-d (depth, 0 = root). The first line of its <title> is the frame's name.
const char *const kFlamegraphScript = R"JS(
(function () {
  var svg = document.documentElement;
  var W = +svg.getAttribute('data-width'), PAD = +svg.getAttribute('data-pad');
  var frames = Array.prototype.slice.call(document.querySelectorAll('g.f'));
  var total = frames.length ? +frames[0].getAttribute('data-w') : 0;
  var unit = svg.getAttribute('data-unit');
  var zoomed = null, term = null;
  function $(id) { return document.getElementById(id); }
  function info(g) {
    return { x: +g.getAttribute('data-x'), w: +g.getAttribute('data-w'),
             d: +g.getAttribute('data-d'),
             name: g.querySelector('title').textContent.split('\n')[0] };
  }
  function label(name, width) {
    var fit = Math.floor((width - 6) / 7.2);
    if (fit < 3) return '';
    return name.length <= fit ? name : name.substring(0, fit - 2) + '..';
  }
  function place(g, x, width) {
    var r = g.querySelector('rect'), t = g.querySelector('text');
    r.setAttribute('x', (PAD + x).toFixed(2));
    r.setAttribute('width', Math.max(width, 0).toFixed(2));
    t.setAttribute('x', (PAD + x + 3).toFixed(2));
    t.textContent = label(info(g).name, width);
  }
  // Shows the subtree of `node` (null: everything) across the full width; its ancestors stay
  // as full-width, faded bars below it.
  function layout(node) {
    var z = node ? info(node) : { x: 0, w: total, d: 0 };
    var scale = z.w > 0 ? (W - 2 * PAD) / z.w : 0;
    frames.forEach(function (g) {
      var f = info(g);
      g.classList.remove('hide', 'anc');
      if (f.d < z.d) {
        if (f.x <= z.x && f.x + f.w >= z.x + z.w) {
          g.classList.add('anc');
          place(g, 0, W - 2 * PAD);
        } else {
          g.classList.add('hide');
        }
      } else if (f.x >= z.x && f.x + f.w <= z.x + z.w && f.w * scale >= 0.1) {
        place(g, (f.x - z.x) * scale, f.w * scale);
      } else {
        g.classList.add('hide');
      }
    });
    zoomed = node;
    $('reset').classList.toggle('off', !node);
    if (term !== null) search(term);
  }
  function percent(v) { return total ? (100 * v / total).toFixed(2) + '%' : '0%'; }
  // Highlights the frames whose name matches `text` (a regular expression, or plain text when
  // it is not a valid one); returns how many frames are highlighted.
  function search(text) {
    var re;
    try { re = new RegExp(text, 'i'); } catch (e) {
      re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
    term = text;
    var matched = [], count = 0;
    frames.forEach(function (g) {
      var r = g.querySelector('rect'), f = info(g);
      if (!r.hasAttribute('data-fill')) r.setAttribute('data-fill', r.getAttribute('fill'));
      var hit = re.test(f.name);
      r.setAttribute('fill', hit ? 'rgb(224,64,224)' : r.getAttribute('data-fill'));
      if (hit) { matched.push(f); if (!g.classList.contains('hide')) count++; }
    });
    // The matched share counts each sample once: frames nested in a matched frame are skipped.
    matched.sort(function (a, b) { return a.x - b.x || a.d - b.d; });
    var sum = 0, end = -1;
    matched.forEach(function (f) { if (f.x >= end) { sum += f.w; end = f.x + f.w; } });
    $('matched').textContent = 'Matched: ' + percent(sum);
    $('clear').classList.remove('off');
    return count;
  }
  function clear() {
    term = null;
    frames.forEach(function (g) {
      var r = g.querySelector('rect');
      if (r.hasAttribute('data-fill')) r.setAttribute('fill', r.getAttribute('data-fill'));
    });
    $('matched').textContent = '';
    $('clear').classList.add('off');
  }
  function ask() {
    var text = window.prompt('Search frames (regular expression):', term || '');
    if (text) search(text); else if (text !== null) clear();
  }
  frames.forEach(function (g) {
    g.addEventListener('click', function () {
      layout(info(g).d === 0 || g === zoomed ? null : g);
    });
    g.addEventListener('mouseover', function () {
      var f = info(g);
      $('details').textContent = f.name + ' (' + f.w.toLocaleString('en-US') + ' ' + unit + ', ' +
          percent(f.w) + ')';
    });
    g.addEventListener('mouseout', function () { $('details').textContent = ' '; });
  });
  $('reset').addEventListener('click', function () { layout(null); });
  $('search').addEventListener('click', ask);
  $('clear').addEventListener('click', clear);
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); ask(); }
    else if (e.key === 'Escape') { clear(); layout(null); }
  });
  window.rbtSearch = search;
  window.rbtClear = clear;
  window.rbtZoom = function (name) {
    var g = frames.filter(function (g) { return info(g).name === name; })[0];
    layout(g || null);
    return !!g;
  };
  layout(null);
})();
)JS";

}  // namespace rbt::profile
