/* scalea database site: draws the page from the JSON in <script id="scalea-data"> (written by
 * `scalea db html`: report/src/db/site.cpp). Plain JavaScript, no library, no network. Views: the
 * experiments by tag and date, a region's classes over the experiments (charts and a table), two
 * experiments compared region by region and by sampled function. How to read it: docs/database.md. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('scalea-data').textContent);
  var CL = D.classes, NC = CL.length;
  var E = D.experiments, byExp = {}, byRegion = {};
  E.forEach(function (e) { byExp[e.id] = e; });
  D.regions.forEach(function (r) { byRegion[r.id] = r; });
  // stats[experiment][region] = {in_run, tp, to, c: [six classes]}
  var ST = {};
  Object.keys(D.stats).forEach(function (id) {
    var m = ST[id] = {};
    D.stats[id].forEach(function (v) { m[v[0]] = { run: v[1], tp: v[2], to: v[3], c: v.slice(4) }; });
  });
  // FN[experiment][function + module] = {name, module, samples, own, on_stack}
  var FN = {};
  Object.keys(D.functions || {}).forEach(function (id) {
    var m = FN[id] = {};
    D.functions[id].forEach(function (v) { m[v[0] + '\u0000' + v[1]] = { name: v[0], module: v[1], samples: v[2], own: v[3], on_stack: v[4] }; });
  });
  var rootId = null;
  D.regions.forEach(function (r) { if (r.depth === 0 && (rootId === null || r.id < rootId)) rootId = r.id; });
  var S = { tab: 'experiments', group: '', region: rootId, a: null, b: null };
  if (E.length) { S.b = E[E.length - 1].id; S.a = E.length > 1 ? E[E.length - 2].id : S.b; }

  function el(id) { return document.getElementById(id); }
  function esc(s) {
    return String(s === undefined || s === null ? '' : s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  // Seconds: 4 decimals down to 1 ms, then 3 significant digits (a join barrier's microseconds
  // must not read as 0).
  function fs(v) {
    if (v === null || v === undefined || !isFinite(v)) return '-';
    var a = Math.abs(v);
    return a === 0 ? '0' : a >= 100 ? v.toFixed(1) : a >= 1e-3 ? v.toFixed(4) : v.toExponential(2);
  }
  function swatch(i) { return '<span class="swatch" style="background:' + CL[i].color + '"></span>'; }
  function stat(e, r) { var m = ST[e]; return m ? m[r] : undefined; }
  function expName(e) { return '#' + e.id + ' ' + esc(e.program) + ' p=' + e.p + (e.started ? ' ' + esc(e.started) : ''); }
  function tagText(e) { return Object.keys(e.tags).sort().map(function (k) { return esc(k + '=' + e.tags[k]); }).join(' '); }
  function classBar(v) {
    var s = '<div class="sbar">';
    if (v && v.tp > 0) v.c.forEach(function (x, i) {
      if (x > 0) s += '<span style="width:' + Math.min(100, 100 * x / v.tp).toFixed(2) + '%;background:' + CL[i].color + '"></span>';
    });
    return s + '</div>';
  }

  /* ---------------------------------------------------------------- layout */
  var tabs = [['experiments', 'Experiments'], ['history', 'History'], ['compare', 'Compare']];
  el('app').innerHTML =
    '<header id="top"><h1><span class="what">scalea database</span> ' + esc(D.database) + '</h1>' +
    '<span class="facts-line">' + E.length + ' experiment(s), ' + D.regions.length + ' region(s)</span></header>' +
    '<main><nav class="tabs" role="tablist">' + tabs.map(function (t) {
      return '<button role="tab" id="tab-' + t[0] + '" data-tab="' + t[0] + '">' + t[1] + '</button>';
    }).join('') + '</nav>' + tabs.map(function (t) {
      return '<div class="panel" id="panel-' + t[0] + '" role="tabpanel"></div>';
    }).join('') + '</main>';

  /* ---------------------------------------------------------------- experiments */
  // Groups of experiments by the value of one tag (in order of their first experiment's date);
  // inside a group, by date.
  function groups() {
    var out = [], at = {};
    E.forEach(function (e) {
      var k = S.group ? (S.group in e.tags ? S.group + '=' + e.tags[S.group] : 'no ' + S.group) : 'all experiments';
      if (!(k in at)) { at[k] = out.length; out.push([k, []]); }
      out[at[k]][1].push(e);
    });
    return out;
  }
  function renderExperiments() {
    var s = '<p><label>group by tag <select id="group"><option value="">(none: by date)</option>' + D.tags.map(function (t) {
      return '<option value="' + esc(t) + '"' + (S.group === t ? ' selected' : '') + '>' + esc(t) + '</option>';
    }).join('') + '</select></label> <span class="note">A and B: the experiments Compare shows; a click on T_p shows the program\'s history.</span></p>';
    s += '<table class="flat" id="exp-table"><thead><tr><th>A</th><th>B</th><th>id</th><th>started</th><th>program</th><th>arguments</th>' +
      '<th>p</th><th>host</th><th>git</th><th>tags</th><th>T_p s</th><th>T_o s</th><th>classes of T_p</th></tr></thead><tbody>';
    groups().forEach(function (g) {
      s += '<tr class="group"><th colspan="13" style="text-align:left">' + esc(g[0]) + ' <small>(' + g[1].length + ')</small></th></tr>';
      g[1].forEach(function (e) {
        var v = stat(e.id, rootId);
        s += '<tr data-id="' + e.id + '"><td><input type="radio" name="a" value="' + e.id + '"' + (S.a === e.id ? ' checked' : '') + '></td>' +
          '<td><input type="radio" name="b" value="' + e.id + '"' + (S.b === e.id ? ' checked' : '') + '></td>' +
          '<td>' + e.id + '</td><td>' + esc(e.started) + '</td><td>' + esc(e.program) + '</td><td class="mono">' + esc(e.arguments) + '</td>' +
          '<td>' + e.p + '</td><td>' + esc(e.host) + '</td><td class="mono">' + esc((e.git || '').substr(0, 10)) + (e.dirty ? '+' : '') + '</td>' +
          '<td class="mono">' + tagText(e) + '</td><td class="num">' + (v ? fs(v.tp) : '-') + '</td><td class="num">' + (v ? fs(v.to) : '-') +
          '</td><td style="min-width:8em">' + classBar(v) + '</td></tr>';
      });
    });
    el('panel-experiments').innerHTML = s + '</tbody></table><div class="legend">' + CL.map(function (c, i) {
      return '<span>' + swatch(i) + esc(c.key) + '</span>';
    }).join('') + '</div>';
  }

  /* ---------------------------------------------------------------- history */
  var SERIES = ['#222', '#888'];
  // A line chart over the experiments that ran the region, in date order: one series per
  // [name, colour, value(stat)].
  function lineChart(id, title, exps, series) {
    var W = 640, H = 230 + 14 * series.length, l = 56, r = 12, t = 24 + 14 * series.length, b = 40, lo = 0, hi = 0;
    exps.forEach(function (e) { series.forEach(function (x) { var v = x[2](stat(e.id, S.region)); lo = Math.min(lo, v); hi = Math.max(hi, v); }); });
    if (hi === lo) hi = lo + 1e-3;
    function X(i) { return l + (i + 0.5) * (W - l - r) / Math.max(1, exps.length); }
    function Y(v) { return H - b - (H - t - b) * (v - lo) / (hi - lo); }
    var s = '<svg class="chart" id="' + id + '" viewBox="0 0 ' + W + ' ' + H + '" role="img" aria-label="' + esc(title) + '">' +
      '<text x="' + l + '" y="14" font-weight="600">' + esc(title) + '</text>';
    [lo, (lo + hi) / 2, hi].forEach(function (v) {
      s += '<line x1="' + l + '" x2="' + (W - r) + '" y1="' + Y(v).toFixed(1) + '" y2="' + Y(v).toFixed(1) + '" stroke="#eee"/>' +
        '<text x="' + (l - 4) + '" y="' + (Y(v) + 4).toFixed(1) + '" text-anchor="end">' + fs(v) + '</text>';
    });
    if (lo < 0) s += '<line x1="' + l + '" x2="' + (W - r) + '" y1="' + Y(0).toFixed(1) + '" y2="' + Y(0).toFixed(1) + '" stroke="#555"/>';
    exps.forEach(function (e, i) {
      s += '<text x="' + X(i).toFixed(1) + '" y="' + (H - b + 14) + '" text-anchor="middle">#' + e.id + '</text>';
    });
    series.forEach(function (x, k) {
      var pts = exps.map(function (e, i) { return [X(i), Y(x[2](stat(e.id, S.region))), x[2](stat(e.id, S.region)), e]; });
      s += '<polyline class="series" data-series="' + esc(x[0]) + '" fill="none" stroke="' + x[1] + '" stroke-width="2" points="' +
        pts.map(function (p) { return p[0].toFixed(1) + ',' + p[1].toFixed(1); }).join(' ') + '"/>';
      pts.forEach(function (p) {
        s += '<circle cx="' + p[0].toFixed(1) + '" cy="' + p[1].toFixed(1) + '" r="3" fill="' + x[1] + '"><title>' + esc(x[0]) + ': ' +
          fs(p[2]) + ' s in #' + p[3].id + ' (' + esc(p[3].started) + ', p = ' + p[3].p + ')</title></circle>';
      });
      s += '<text class="key" x="' + l + '" y="' + (16 + 14 * (k + 1)) + '"><tspan fill="' + x[1] + '" font-size="14">&#9632;</tspan> ' +
        esc(x[0]) + '</text>';
    });
    s += '<text x="' + (W / 2) + '" y="' + (H - 6) + '" text-anchor="middle">experiments by date (id)</text>';
    return s + '</svg>';
  }
  function historyExps() { return E.filter(function (e) { var v = stat(e.id, S.region); return v && v.run; }); }
  function renderHistory() {
    var ids = Object.keys(byRegion).map(Number).sort(function (a, b) { return byRegion[a].path < byRegion[b].path ? -1 : 1; });
    var s = '<p><label>region <select id="region">' + ids.map(function (id) {
      var n = E.filter(function (e) { return stat(e.id, id); }).length;
      return '<option value="' + id + '"' + (S.region === id ? ' selected' : '') + '>' + esc(byRegion[id].path) + ' (' + n + ')</option>';
    }).join('') + '</select></label></p>';
    var r = byRegion[S.region], exps = historyExps();
    if (!r) { el('panel-history').innerHTML = s + '<p>No region.</p>'; return; }
    s += '<h3>' + esc(r.label) + (r.loc ? ' @' + esc(r.loc) : '') + ' <small>' + exps.length + ' experiment(s) ran it, by date</small></h3>';
    s += '<div class="charts">' + lineChart('history-time', 'T_p and T_o (s)', exps, [
      ['T_p', SERIES[0], function (v) { return v.tp; }], ['T_o', SERIES[1], function (v) { return v.to; }]]) +
      lineChart('history-classes', 'overhead classes (s)', exps, CL.map(function (c, i) {
        return [c.key, c.color, function (v) { return v.c[i]; }];
      })) + '</div>';
    s += '<table class="flat" id="history-table"><thead><tr><th>id</th><th>started</th><th>p</th><th>tags</th><th>T_p s</th><th>T_o s</th>' +
      CL.map(function (c, i) { return '<th title="' + esc(c.key) + '">' + swatch(i) + esc(c.short) + '</th>'; }).join('') + '</tr></thead><tbody>' +
      exps.map(function (e) {
        var v = stat(e.id, S.region);
        return '<tr data-id="' + e.id + '"><td>' + e.id + '</td><td>' + esc(e.started) + '</td><td>' + e.p + '</td><td class="mono">' + tagText(e) +
          '</td><td class="num">' + fs(v.tp) + '</td><td class="num">' + fs(v.to) + '</td>' +
          v.c.map(function (x) { return '<td class="num">' + fs(x) + '</td>'; }).join('') + '</tr>';
      }).join('') + '</tbody></table>';
    el('panel-history').innerHTML = s;
  }

  /* ---------------------------------------------------------------- compare */
  // Every region either experiment holds, largest change of T_p first; B - A.
  function compareRows() {
    var seen = {}, rows = [];
    [S.a, S.b].forEach(function (x) { Object.keys(ST[x] || {}).forEach(function (id) { seen[id] = 1; }); });
    Object.keys(seen).forEach(function (id) {
      var a = stat(S.a, id), b = stat(S.b, id);
      var va = a && a.run ? a : null, vb = b && b.run ? b : null;
      if (!va && !vb) return;
      function d(f) { return (vb ? f(vb) : 0) - (va ? f(va) : 0); }
      rows.push({ id: +id, a: va, b: vb, dtp: d(function (v) { return v.tp; }), dto: d(function (v) { return v.to; }),
        dc: CL.map(function (c, i) { return d(function (v) { return v.c[i]; }); }) });
    });
    rows.sort(function (x, y) { return Math.abs(y.dtp) - Math.abs(x.dtp) || x.id - y.id; });
    return rows;
  }
  function expSelect(id, cur) {
    return '<select id="' + id + '">' + E.map(function (e) {
      return '<option value="' + e.id + '"' + (cur === e.id ? ' selected' : '') + '>' + expName(e) + '</option>';
    }).join('') + '</select>';
  }
  function delta(v) { return '<td class="num ' + (v > 0 ? 'worse' : v < 0 ? 'better' : '') + '">' + (v > 0 ? '+' : '') + fs(v) + '</td>'; }
  function renderCompare() {
    var s = '<p><label>A ' + expSelect('cmp-a', S.a) + '</label> <label>B ' + expSelect('cmp-b', S.b) + '</label> ' +
      '<span class="note">differences are B - A in seconds; a region only one of them ran counts 0 in the other</span></p>';
    var ea = byExp[S.a], eb = byExp[S.b];
    s += '<table class="kv" id="cmp-facts">' + [['', 'A', 'B']].concat(['program', 'arguments', 'p', 'host', 'started', 'git'].map(function (k) {
      return [k, esc(ea[k]), esc(eb[k])];
    })).concat([['tags', tagText(ea), tagText(eb)], ['program classes', classBar(stat(S.a, rootId)), classBar(stat(S.b, rootId))]]).map(function (x) {
      return '<tr><td>' + x[0] + '</td><td>' + x[1] + '</td><td>' + x[2] + '</td></tr>';
    }).join('') + '</table>';
    s += '<table class="flat" id="cmp-table"><thead><tr><th>region</th><th>T_p A</th><th>T_p B</th><th>&Delta; T_p</th><th>T_o A</th><th>T_o B</th>' +
      '<th>&Delta; T_o</th>' + CL.map(function (c, i) { return '<th title="&Delta; ' + esc(c.key) + '">' + swatch(i) + '&Delta; ' + esc(c.short) + '</th>'; }).join('') +
      '</tr></thead><tbody>' + compareRows().map(function (x) {
        var r = byRegion[x.id];
        return '<tr data-region="' + x.id + '"><td class="name" title="' + esc(r.path) + '">' + '&nbsp;'.repeat(2 * r.depth) + esc(r.label) +
          (r.loc ? ' @' + esc(r.loc) : '') + (x.a ? '' : ' <span class="chip">only B</span>') + (x.b ? '' : ' <span class="chip">only A</span>') +
          '</td><td class="num">' + (x.a ? fs(x.a.tp) : '-') + '</td><td class="num">' + (x.b ? fs(x.b.tp) : '-') + '</td>' + delta(x.dtp) +
          '<td class="num">' + (x.a ? fs(x.a.to) : '-') + '</td><td class="num">' + (x.b ? fs(x.b.to) : '-') + '</td>' + delta(x.dto) +
          x.dc.map(delta).join('') + '</tr>';
      }).join('') + '</tbody></table>';
    el('panel-compare').innerHTML = s + compareFunctions();
  }
  // Where the CPU time went in A and in B (call-path samples, summed over each experiment's
  // regions; the hottest functions of each, as stored): own CPU time, B - A.
  function compareFunctions() {
    var fa = FN[S.a] || {}, fb = FN[S.b] || {}, keys = {};
    Object.keys(fa).concat(Object.keys(fb)).forEach(function (k) { keys[k] = 1; });
    var rows = Object.keys(keys).map(function (k) {
      var a = fa[k], b = fb[k];
      return { k: k, a: a, b: b, d: (b ? b.own : 0) - (a ? a.own : 0) };
    });
    if (!rows.length) return '<p class="note" id="cmp-functions-none">neither experiment holds call-path samples (scalea run samples by default; docs/sampling.md)</p>';
    rows.sort(function (x, y) { return Math.abs(y.d) - Math.abs(x.d) || (x.k < y.k ? -1 : 1); });
    return '<h3>Sampled functions</h3><p class="note">own CPU time (s) from call-path samples, the hottest functions of each experiment; a function one of them does not list counts 0 there</p>' +
      '<table class="flat" id="cmp-functions"><thead><tr><th>function</th><th>module</th><th>own A</th><th>own B</th><th>&Delta; own</th></tr></thead><tbody>' +
      rows.map(function (x) {
        var f = x.a || x.b;
        return '<tr data-function="' + esc(f.name) + '"><td class="name">' + esc(f.name) + '</td><td>' + esc(f.module) + '</td><td class="num">' +
          (x.a ? fs(x.a.own) : '-') + '</td><td class="num">' + (x.b ? fs(x.b.own) : '-') + '</td>' + delta(x.d) + '</tr>';
      }).join('') + '</tbody></table>';
  }

  /* ---------------------------------------------------------------- state and events */
  function show(tab) {
    S.tab = tab;
    tabs.forEach(function (t) {
      el('tab-' + t[0]).setAttribute('aria-selected', String(t[0] === tab));
      el('panel-' + t[0]).hidden = t[0] !== tab;
    });
    ({ experiments: renderExperiments, history: renderHistory, compare: renderCompare })[tab]();
  }
  document.addEventListener('click', function (ev) {
    var t = ev.target.closest('[data-tab]');
    if (t) { show(t.getAttribute('data-tab')); return; }
    var tp = ev.target.closest('#exp-table tr[data-id] td.num');
    if (tp) { S.region = rootId; show('history'); }
  });
  document.addEventListener('change', function (ev) {
    var t = ev.target;
    if (t.id === 'group') { S.group = t.value; renderExperiments(); }
    else if (t.name === 'a' || t.id === 'cmp-a') { S.a = +t.value; if (t.id) renderCompare(); }
    else if (t.name === 'b' || t.id === 'cmp-b') { S.b = +t.value; if (t.id) renderCompare(); }
    else if (t.id === 'region') { S.region = +t.value; renderHistory(); }
  });
  show('experiments');
  // For tests and the console: the state and a way to pick.
  window.scaleaDb = { state: S, show: show };
  document.documentElement.setAttribute('data-ready', '1');
})();
