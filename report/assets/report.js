/* scalea HTML report: draws the page from the JSON in <script id="scalea-data"> (written by
 * scalea: report/src/html/html.cpp for an experiment, study/study_html.cpp for a study). Plain
 * JavaScript, no library, no network. Views: summary (the most expensive region, the program's classes, the
 * findings), an icicle graph of the call tree, coupled panes (metric tree x call tree x the PEs
 * of the picked region), a sortable flat profile, the region graph, and for a study the speedup
 * and classes of each region vs p. How to read it: docs/report.md. */
(function () {
  'use strict';
  var D = JSON.parse(document.getElementById('scalea-data').textContent);
  var CL = D.classes;
  var NC = CL.length;
  var STUDY = D.kind === 'study';
  var R = D.regions;
  var byId = {};
  var kids = {};
  var root = null;
  R.forEach(function (r) {
    byId[r.id] = r;
    kids[r.id] = [];
  });
  R.forEach(function (r) {
    if (r.parent === null || byId[r.parent] === undefined) { if (root === null) root = r; } else kids[r.parent].push(r);
  });
  var CLASS_NAMES = {
    data_movement: 'data movement', synchronization: 'synchronization',
    control_of_parallelism: 'control of parallelism', additional_computation: 'additional computation',
    loss_of_parallelism: 'loss of parallelism', unidentified: 'unidentified'
  };
  var CLASS_HELP = {
    data_movement: 'MPI transfers, one-sided and MPI-IO; extra cache misses (priced) beyond the reference',
    synchronization: 'barrier, lock, critical, taskwait and reduction waits; MPI waiting; load imbalance',
    control_of_parallelism: 'fork/join, loop scheduling, task creation, runtime and MPI start-up',
    additional_computation: 'work the parallel version does that the reference does not',
    loss_of_parallelism: 'serial or partially parallel code, replicated work: PEs idle',
    unidentified: 'the rest of T_o (can be negative: superlinear effects)'
  };

  /* ---------------------------------------------------------------- helpers */
  function esc(s) {
    return String(s === undefined || s === null ? '' : s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }
  function fs(v) { // seconds
    if (v === null || v === undefined || isNaN(v)) return '-';
    var a = Math.abs(v);
    if (a < 1e-9) return '0'; // rounding noise of sums, not time
    if (a >= 1000) return v.toFixed(1);
    if (a >= 1e-4) return v.toFixed(4);
    return v.toExponential(1);
  }
  function fx(v, d) { return v === null || v === undefined || !isFinite(v) ? '-' : v.toFixed(d === undefined ? 2 : d); }
  function pct(v, base) { return base > 0 ? (Math.abs(v / base) < 5e-4 ? '0.0' : (100 * v / base).toFixed(1)) + '%' : '-'; }
  function hex(c) { return [parseInt(c.substr(1, 2), 16), parseInt(c.substr(3, 2), 16), parseInt(c.substr(5, 2), 16)]; }
  function rgb(a) { return 'rgb(' + Math.round(a[0]) + ',' + Math.round(a[1]) + ',' + Math.round(a[2]) + ')'; }
  function mix(a, b, t) { return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]; }
  var WHITE = [255, 255, 255];
  // A stronger tone of a class colour (the pastel class colours are for fills), for heat scales.
  function strong(c) { var x = hex(c); return mix(x, [x[0] * 0.55, x[1] * 0.55, x[2] * 0.55], 0.75); }
  function heatOf(c, t) { return rgb(mix(WHITE, strong(c), Math.max(0, Math.min(1, t)))); }
  // Sequential palette of the per-PE views: light (short) to dark (long).
  var PE_SCALE = [[255, 247, 236], [253, 212, 158], [252, 141, 89], [215, 48, 31], [127, 0, 0]];
  function peColour(t) {
    t = Math.max(0, Math.min(1, t)) * (PE_SCALE.length - 1);
    var i = Math.min(PE_SCALE.length - 2, Math.floor(t));
    return rgb(mix(PE_SCALE[i], PE_SCALE[i + 1], t - i));
  }
  function el(id) { return document.getElementById(id); }
  function swatch(i) { return '<span class="swatch" style="background:' + CL[i].color + '"></span>'; }
  function classIndex(key) { for (var i = 0; i < NC; ++i) if (CL[i].key === key) return i; return -1; }
  function label(r) { return r.label + (r.loc ? ' @' + r.loc : ''); }
  // The call path as scalea prints it (drg::call_path): the components from the program down,
  // joined by '/'; deeper than 2,000 levels, the program, '...(N levels)...' and the last 10.
  var PATH_LEVELS = 2000, PATH_TAIL = 10;
  function pathOf(r) {
    var shortened = r.depth > PATH_LEVELS, keep = shortened ? PATH_TAIL : r.depth + 1, chain = [];
    for (var n = r, i = 0; i < keep && n; ++i, n = n.parent === null ? null : byId[n.parent]) chain.unshift(n.pc);
    return (shortened ? root.pc + '/...(' + (r.depth - PATH_TAIL) + ' levels).../' : '') + chain.join('/');
  }
  function b64(s) {
    var bin = atob(s), out = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; ++i) out[i] = bin.charCodeAt(i);
    return out;
  }

  /* ---------------------------------------------------------------- state */
  var configs = D.configs || [];
  var S = {
    metric: 'to', region: null, tab: 'tree', own: false, order: 'value', unfold: false,
    zoom: root ? root.id : null, config: 0, open: {}, small: {}, mopen: {},
    flat: { mode: 'bottomup', key: 'to', dir: -1, filter: '' }, graphFit: true,
    pe: null, callers: {}
  };
  if (STUDY) { // the largest p with data
    for (var ci = configs.length - 1; ci >= 0; --ci) if (root && root.cells[ci]) { S.config = ci; break; }
  }

  /* Values of a region (at the chosen configuration of a study). */
  function cell(r) { return STUDY ? r.cells[S.config] : r; }
  function tp(r) { var c = cell(r); return c ? (STUDY ? c.t : c.tp) : 0; }
  function to(r) { var c = cell(r); return c ? c.to : 0; }
  function cls(r, i) { var c = cell(r); return c ? c.c[i] : 0; }
  function sub(r, k) { return STUDY || !r.sub ? 0 : (r.sub[k] || 0); }
  function present(r) { return !!cell(r); }
  // The largest positive class above 0.5% of T_p (export_formats' dominant_class), or -1.
  function dominant(r) {
    if (!STUDY) return r.dom;
    var best = -1, bv = 0, t = tp(r);
    for (var i = 0; i < NC; ++i) { var v = cls(r, i); if (v > bv) { bv = v; best = i; } }
    return best >= 0 && bv > 0.005 * t ? best : -1;
  }
  function shown(r) { return S.unfold || !r.folded; }
  function children(r) { return kids[r.id].filter(shown); }

  /* Metrics: T_p, T_o, the six classes and their subclasses. */
  var SUBS = {};
  if (!STUDY) R.forEach(function (r) { for (var k in r.sub) SUBS[k] = 1; });
  var METRICS = {};
  function addMetric(key, name, colour, get, parent, ci) {
    METRICS[key] = { key: key, name: name, colour: colour, get: get, parent: parent, kids: [], ci: ci };
    if (parent) METRICS[parent].kids.push(key);
  }
  addMetric('tp', 'time T_p', '#9a9a9a', tp, null, -1);
  addMetric('to', 'overhead T_o', '#d6604d', to, null, -1);
  CL.forEach(function (c, i) {
    addMetric('c' + i, CLASS_NAMES[c.key] || c.key, c.color, function (r) { return cls(r, i); }, 'to', i);
  });
  Object.keys(SUBS).sort().forEach(function (k) {
    var i = classIndex(k.split('.')[0]);
    if (i < 0) return;
    addMetric('s:' + k, k.substr(k.indexOf('.') + 1), CL[i].color, function (r) { return sub(r, k); }, 'c' + i, i);
  });
  // The picked PE's values (system pane): its time in each region, the wait the collector timed
  // there (exact per-PE data only), its time beyond its share of the reference time, T_s/p, and
  // its time in the classes the classifier's rules split a PE's own time into (exact data only:
  // D.distribution.pe_classes; computed by the analysis, analysis/pe_split.hpp). Additional
  // computation and unidentified are found per region over all PEs, not per PE.
  var PEV = {};
  function peVals(r) { return PEV[r.id] || (PEV[r.id] = peValues(r)); }
  function peTime(r) { return S.pe === null ? 0 : peVals(r).v[S.pe] || 0; }
  if (!STUDY) {
    addMetric('pe:t', 'time on the PE', '#6a51a3', peTime, null, -1);
    if (D.distribution.mode === 'exact') addMetric('pe:w', 'its waiting (timed)', '#d6604d', function (r) {
      return S.pe === null ? 0 : r.pe.w[S.pe] || 0;
    }, null, -1);
    addMetric('pe:x', 'its time beyond T_s/p', '#b2182b', function (r) {
      var v = peTime(r);
      return v > 0 ? v - peShare(r) : 0;
    }, null, -1);
    (D.distribution.pe_classes || []).forEach(function (i) {
      addMetric('pe:c' + i, 'its ' + (CLASS_NAMES[CL[i].key] || CL[i].key), CL[i].color, function (r) {
        var k = r.pe.k && r.pe.k[i];
        return S.pe === null || !k ? 0 : k[S.pe] || 0;
      }, null, i);
    });
  }
  var PE_METRICS = Object.keys(METRICS).filter(function (k) { return k.substr(0, 3) === 'pe:'; });
  function isPeMetric(m) { return m.substr(0, 3) === 'pe:'; }
  function mval(r, m) { return (METRICS[m] || METRICS.to).get(r); }
  // A region's own value: its value minus its (shown) children's.
  function mown(r, m) {
    var v = mval(r, m);
    children(r).forEach(function (c) { v -= mval(c, m); });
    return m === 'tp' ? Math.max(0, v) : v;
  }
  function value(r) { return S.own ? mown(r, S.metric) : mval(r, S.metric); }

  /* ---------------------------------------------------------------- layout */
  var app = el('app');
  function factsLine() {
    if (STUDY) {
      var f = {};
      D.facts.forEach(function (x) { f[x[0]] = x[1]; });
      return esc(f.command) + ' &middot; ' + esc(f.plan);
    }
    var r = root, ref = D.estimated ? 'no reference: T_s estimated' : 'reference ' + esc(factOf('reference'));
    return 'p = ' + D.p + ' &middot; ' + esc(factOf('processing elements').replace(/^p = \d+ /, '')) +
      ' &middot; T_p ' + fs(tp(r)) + ' s &middot; ' + ref;
  }
  function factOf(k) { for (var i = 0; i < D.facts.length; ++i) if (D.facts[i][0] === k) return D.facts[i][1]; return ''; }

  var tabs = [['tree', 'Call tree'], ['flat', 'Flat profile'], ['callers', 'Callers']];
  if (!STUDY) tabs.push(['graph', 'Region graph']);
  tabs.push(['about', 'About']);
  app.innerHTML =
    '<header id="top"><h1><span class="what">scalea ' + (STUDY ? 'study' : 'report') + '</span> ' + esc(D.title) + '</h1>' +
    '<span class="facts-line">' + factsLine() + '</span>' +
    '<span class="right"><button class="link" id="help-btn" title="keyboard and mouse (?)">keys <kbd>?</kbd></button></span></header>' +
    (D.warnings && D.warnings.length ? '<div class="warnings" id="warnings">' + D.warnings.map(function (w) {
      return '<div>&#9888; ' + esc(w) + '</div>';
    }).join('') + '</div>' : '') +
    '<main><section id="summary"></section>' +
    '<section id="flame-sec"><div class="flame-bar"><h2>Call tree by time <small>width = T_p, colour = dominant overhead class; ' +
    'hover for the classes, click to zoom and pick, <kbd>Esc</kbd> zooms out</small></h2>' +
    '<span id="flame-path" class="note"></span></div><div id="flame" role="img" aria-label="icicle graph of the call tree"></div></section>' +
    '<section id="explore"><nav class="tabs" role="tablist">' + tabs.map(function (t, i) {
      return '<button role="tab" id="tab-' + t[0] + '" data-tab="' + t[0] + '" title="' + t[1] + ' (' + (i + 1) + ')">' + t[1] + '</button>';
    }).join('') + (STUDY ? '<label class="cfg">values at <select id="config">' + configs.map(function (c, i) {
      return '<option value="' + i + '">p = ' + esc(c.label) + '</option>';
    }).join('') + '</select></label>' : '') + '</nav>' +
    '<div class="work"><div class="panels">' +
    '<div class="panel" id="panel-tree" role="tabpanel" data-title="Call tree"><div class="cube">' +
    '<div class="left"><div class="pane"><div class="pane-title">metric</div><div id="metrics" class="scroll" role="tree" tabindex="0" aria-label="metrics"></div></div>' +
    (STUDY ? '' : '<div class="pane" id="system-pane"><div class="pane-title"><span>system: the PEs</span>' +
      '<button class="link no-print" id="pe-clear">all PEs</button></div><div id="system" class="scroll" role="tree" tabindex="0" aria-label="PEs"></div></div>') +
    '</div>' +
    '<div class="pane"><div class="pane-title"><span>call tree</span>' +
    '<label><input type="checkbox" id="own"> own values</label>' +
    '<label><select id="order"><option value="value">largest first</option><option value="call">call order</option></select></label>' +
    (R.some(function (r) { return r.folded; }) ? '<label><input type="checkbox" id="unfold"> unfold recursion</label>' : '') +
    '<button class="link no-print" id="expand-all">expand all</button><button class="link no-print" id="collapse-all">fold to what matters</button></div>' +
    '<div id="tree" class="scroll" role="tree" tabindex="0" aria-label="call tree"></div></div></div></div>' +
    '<div class="panel" id="panel-flat" role="tabpanel" data-title="Flat profile" hidden></div>' +
    '<div class="panel" id="panel-callers" role="tabpanel" data-title="Callers" hidden></div>' +
    (STUDY ? '' : '<div class="panel" id="panel-graph" role="tabpanel" data-title="Region graph" hidden></div>') +
    '<div class="panel" id="panel-about" role="tabpanel" data-title="About this report" hidden></div>' +
    '</div><aside id="region" aria-live="polite"></aside></div></section></main>' +
    '<div id="tip" hidden></div><div id="help" hidden role="dialog" aria-label="keys"></div>';

  /* ---------------------------------------------------------------- tooltip */
  var tip = el('tip');
  function showTip(html, ev) {
    tip.innerHTML = html;
    tip.hidden = false;
    var x = ev.clientX + 14, y = ev.clientY + 14, w = tip.offsetWidth, hh = tip.offsetHeight;
    if (x + w > window.innerWidth - 4) x = Math.max(4, ev.clientX - w - 10);
    if (y + hh > window.innerHeight - 4) y = Math.max(4, ev.clientY - hh - 10);
    tip.style.left = x + 'px';
    tip.style.top = y + 'px';
  }
  function hideTip() { tip.hidden = true; }
  function classTable(r) {
    var s = '<table>';
    for (var i = 0; i < NC; ++i) s += '<tr><td>' + swatch(i) + esc(CL[i].key) + '</td><td class="num">' + fs(cls(r, i)) + ' s</td></tr>';
    return s + '</table>';
  }
  function regionTip(r) {
    if (!present(r)) return '<b>' + esc(label(r)) + '</b><br>not run at this p';
    return '<b>' + esc(label(r)) + '</b><br>T_p ' + fs(tp(r)) + ' s &middot; T_o ' + fs(to(r)) + ' s (' + pct(to(r), tp(r)) + ' of T_p)' +
      classTable(r);
  }

  /* ---------------------------------------------------------------- stacked class bars */
  // Positive class values as shares of `base` (the rest of the bar stays white: useful work).
  function classBar(r, base, extra) {
    var s = '<div class="sbar ' + (extra || '') + '">';
    if (base > 0) for (var i = 0; i < NC; ++i) {
      var v = cls(r, i);
      if (v > 0) s += '<span class="seg ' + CL[i].key + '" style="width:' + Math.min(100, 100 * v / base).toFixed(2) +
        '%;background:' + CL[i].color + '"></span>';
    }
    return s + '</div>';
  }

  /* ---------------------------------------------------------------- summary */
  function findingRegion(f) { return f.node === null || f.node === undefined ? null : byId[f.node]; }
  function ownTo(r) { return mown(r, 'to'); }
  function renderSummary() {
    var s = '<div class="card hot" id="hot">' + hotSpot() + programCard() + '</div>';
    var fl = D.findings || [];
    s += '<div class="card" id="findings-card"><h2>Findings <small>largest overheads first, each where it happened; click to show the region</small></h2>';
    if (fl.length) {
      s += '<ol class="findings">' + fl.map(function (f) {
        var i = classIndex(f['class']);
        return '<li class="finding" data-node="' + (f.node === null ? '' : f.node) + '" tabindex="0">' + (i >= 0 ? swatch(i) : '') +
          '<span class="cls">' + esc(f['class']) + (f.subclass ? '.' + esc(f.subclass) : '') + '</span> ' + fs(f.seconds) + ' s: ' +
          esc(f.text) + findingSource(f) + '</li>';
      }).join('') + '</ol>';
    } else s += '<p>No finding.</p>';
    s += '<p class="note">' + esc(D.findings_note || '') + '</p></div>';
    el('summary').innerHTML = s;
  }
  // The first finding the program's code can change: a fixed cost ranked above it (the MPI
  // library's or the runtime's start-up, "nothing in the code to change") is named under it.
  function actionable(f) { return f.actionable !== false; }
  // The source lines a finding points at (its directive and statement), the region's line marked
  // with the finding's seconds; '' when the report could not read the file.
  function findingSource(f) {
    var src = f.source;
    if (!src || !src.lines || !src.lines.length) return '';
    var file = String(src.file).split('/').pop();
    return '<pre class="fsrc" title="' + esc(src.file) + '">' + src.lines.map(function (l) {
      return esc(file + ':' + l.line) + ' | ' + esc(l.text) + (l.line === src.line ? '   \u2190 ' + fs(f.seconds) + ' s here' : '');
    }).join('\n') + '</pre>';
  }

  function hotSpot() {
    var fl = D.findings || [], f = fl.filter(actionable)[0] || fl[0], r = f ? findingRegion(f) : null;
    if (f && r) {
      var i = classIndex(f['class']), fixed = fl.slice(0, fl.indexOf(f)).filter(function (x) { return !actionable(x); });
      return '<div class="k">Most expensive' + (STUDY ? ' at p = ' + D.findings_p : '') + (fixed.length ? ' that the code can change' : '') + '</div>' +
        '<div class="big"><a data-region="' + r.id + '" tabindex="0">' + esc(f.region) + (f.location ? ' @' + esc(f.location) : '') + '</a></div>' +
        '<div class="why">' + (i >= 0 ? '<span class="chip" style="background:' + CL[i].color + '">' + esc(f['class']) +
          (f.subclass ? '.' + esc(f.subclass) : '') + '</span> ' : '') + '<b>' + fs(f.seconds) + ' s</b>, ' + fx(f.percent, 0) +
        '% of ' + esc(f.context || 'the region') + '</div><div class="hint">' + esc(f.hint) + '</div>' +
        (fixed.length ? '<div class="note" id="fixed-costs">Larger, but fixed costs: ' + fixed.map(function (x) {
          return esc(x.region) + (x.location ? ' @' + esc(x.location) : '') + ' ' + fs(x.seconds) + ' s';
        }).join(', ') + ' (' + esc(fixed[0]['class'] + (fixed[0].subclass ? '.' + fixed[0].subclass : '')) + ': nothing in the code to change).</div>' : '');
    }
    // No finding: the region with the largest own overhead.
    var best = null;
    R.forEach(function (x) { if (x !== root && shown(x) && present(x) && (!best || ownTo(x) > ownTo(best))) best = x; });
    if (!best) return '<div class="k">Most expensive</div><div class="big">no region below the program</div>';
    var d = dominant(best);
    return '<div class="k">Largest own overhead</div><div class="big"><a data-region="' + best.id + '" tabindex="0">' + esc(label(best)) + '</a></div>' +
      '<div class="why">T_o ' + fs(ownTo(best)) + ' s of its own' + (d >= 0 ? ', mostly <span class="chip" style="background:' +
        CL[d].color + '">' + esc(CL[d].key) + '</span>' : '') + ' (no finding)</div>';
  }
  function programCard() {
    var r = root, s = '<div class="program"><div class="k">Program' + (STUDY ? ' at p = ' + esc(configs[S.config].label) : '') + '</div>';
    s += '<div>T_p <b>' + fs(tp(r)) + ' s</b> &middot; T_o <b>' + fs(to(r)) + ' s</b> (' + pct(to(r), tp(r)) + ' of T_p)' +
      (!STUDY && D.estimated ? ' &middot; <span class="note">T_s estimated (no reference)</span>' : '') + '</div>';
    s += classBar(r, tp(r), 'big') + '<div class="legend">' + CL.map(function (c, i) {
      return '<span>' + swatch(i) + esc(CLASS_NAMES[c.key]) + ' ' + fs(cls(r, i)) + '</span>';
    }).join('') + '</div>';
    if (STUDY) s += '<div class="charts">' + speedupChart([root], 'program') + stackedChart(root) + '</div>';
    return s + '</div>';
  }

  /* ---------------------------------------------------------------- icicle graph */
  var ROW = 19, FLAME_LEVELS = 120;
  function renderFlame() {
    var box = el('flame'), z = byId[S.zoom] || root, out = [], maxDepth = 0, cut = 0;
    var anc = [];
    for (var a = z; a && a.parent !== null && byId[a.parent] && anc.length < FLAME_LEVELS / 2; ) { a = byId[a.parent]; anc.unshift(a); }
    anc.forEach(function (a, i) { out.push(cellHtml(a, i, 0, 100, 'anc')); });
    var base = anc.length, stack = [[z, 0, 0, 100]];
    // Depth first with an explicit stack (a recursion may be 100,000 levels deep); cells below
    // 0.05% of the width and levels beyond FLAME_LEVELS are not drawn (zoom in to see them).
    while (stack.length) {
      var it = stack.pop(), r = it[0], depth = it[1], x = it[2], w = it[3];
      if (w < 0.05 || !present(r)) continue;
      if (depth >= FLAME_LEVELS) { cut = Math.max(cut, depth); continue; }
      out.push(cellHtml(r, base + depth, x, w, ''));
      maxDepth = Math.max(maxDepth, base + depth);
      var ch = children(r), sum = 0, t = tp(r);
      ch.forEach(function (c) { sum += tp(c); });
      var scale = Math.max(t, sum);
      if (scale <= 0) continue;
      for (var i = ch.length - 1, cx = x + w * sum / scale; i >= 0; --i) { // call order, left to right
        var cw = w * tp(ch[i]) / scale;
        cx -= cw;
        stack.push([ch[i], depth + 1, cx, cw]);
      }
    }
    box.style.height = ((maxDepth + 1) * ROW + 2) + 'px';
    box.innerHTML = out.join('');
    el('flame-path').textContent = (z === root ? '' : 'zoomed to ' + label(z)) +
      (cut ? (z === root ? '' : '; ') + 'levels below ' + FLAME_LEVELS + ' not drawn: click a deep cell to zoom in' : '');
  }
  function cellHtml(r, depth, x, w, extra) {
    var d = dominant(r);
    return '<div class="fl ' + extra + (d < 0 ? ' none' : '') + (r.id === S.region ? ' sel' : '') + '" data-id="' + r.id +
      '" style="left:' + x.toFixed(3) + '%;width:' + w.toFixed(3) + '%;top:' + depth * ROW + 'px' +
      (d >= 0 ? ';background:' + CL[d].color : '') + '">' + esc(label(r)) + '</div>';
  }

  /* ---------------------------------------------------------------- metric pane */
  function metricRows() {
    var rows = [];
    function add(key, depth) {
      rows.push([key, depth]);
      var m = METRICS[key];
      if (!m.kids.length || !(S.mopen[key] || key === 'to')) return;
      var ks = m.kids.slice();
      if (key !== 'to') ks.sort(function (a, b) { return Math.abs(mval(root, b)) - Math.abs(mval(root, a)); });
      ks.forEach(function (k) { add(k, depth + 1); });
    }
    if (S.pe !== null) PE_METRICS.forEach(function (k) { rows.push([k, 0]); });
    add('tp', 0);
    add('to', 0);
    return rows;
  }
  function renderMetrics() {
    var sel = S.region !== null ? byId[S.region] : null;
    var s = '<div class="mrow mhead"><span>metric</span><span class="num">program</span><span class="num">picked</span></div>';
    s += metricRows().map(function (x) {
      var m = METRICS[x[0]], has = m.kids.length > 0 && m.key !== 'to';
      return '<div class="mrow" role="treeitem" data-metric="' + esc(m.key) + '" aria-level="' + (x[1] + 1) + '" aria-selected="' +
        (S.metric === m.key) + '"' + (has ? ' aria-expanded="' + !!S.mopen[m.key] + '"' : '') + ' title="' +
        esc(m.ci >= 0 && m.key.charAt(0) === 'c' ? CL[m.ci].key + ': ' + CLASS_HELP[CL[m.ci].key] : m.name) + '">' +
        '<span class="name" style="padding-left:' + (0.3 + 1.1 * x[1]) + 'em"><span class="tog">' +
        (has ? (S.mopen[m.key] ? '&#9662;' : '&#9656;') : '') + '</span>' +
        '<span class="swatch" style="background:' + m.colour + '"></span>' + esc(m.name) + '</span>' +
        '<span class="num">' + fs(m.get(root)) + '</span><span class="num">' + (sel ? fs(m.get(sel)) : '') + '</span></div>';
    }).join('');
    el('metrics').innerHTML = s;
  }

  /* ---------------------------------------------------------------- call tree */
  // Folded to what matters: the paths to the findings' regions and to regions holding at least
  // 5% of the program's time as their own T_p or T_o are open; the rest is one click away.
  function foldToWhatMatters() {
    S.open = {};
    var t = tp(root) || 1;
    function openTo(r) { for (var a = r; a && a.parent !== null; ) { a = byId[a.parent]; if (a) S.open[a.id] = 1; } }
    (D.findings || []).forEach(function (f) { var r = findingRegion(f); if (r) openTo(r); });
    R.forEach(function (r) {
      if (shown(r) && present(r) && (mown(r, 'tp') >= 0.05 * t || Math.abs(ownTo(r)) >= 0.05 * t)) openTo(r);
    });
    if (root) S.open[root.id] = 1;
  }
  function sortedChildren(r) {
    var ch = children(r);
    if (S.order === 'value') ch.sort(function (a, b) { return value(b) - value(a) || tp(b) - tp(a); });
    return ch;
  }
  // Rows shown: children of open rows; below 0.1% of the program's time and metric, siblings are
  // grouped into one "small regions" row.
  function treeRows() {
    var rows = [], t = tp(root), mv = Math.abs(value(root)) || t, stack = [{ r: root, depth: 0 }], onPath = {};
    for (var a = byId[S.region]; a; a = a.parent === null ? null : byId[a.parent]) onPath[a.id] = 1;
    // Depth first with an explicit stack: a recursion may be 100,000 levels deep.
    while (stack.length) {
      var x = stack.pop();
      rows.push(x);
      if (x.small || !S.open[x.r.id]) continue;
      var ch = sortedChildren(x.r), small = [], next = [];
      ch.forEach(function (c) {
        var tiny = tp(c) < 0.001 * t && Math.abs(value(c)) < 0.001 * mv && !onPath[c.id];
        if (tiny && !S.small[x.r.id]) small.push(c); else next.push({ r: c, depth: x.depth + 1 });
      });
      if (small.length) next.push({ small: small, parent: x.r, depth: x.depth + 1 });
      for (var i = next.length - 1; i >= 0; --i) stack.push(next[i]);
    }
    return rows;
  }
  function holds(r, id) { for (var a = byId[id]; a; a = a.parent === null ? null : byId[a.parent]) if (a === r) return true; return false; }
  var treeOrder = [], INDENT_LEVELS = 40; // deeper rows say their depth instead of indenting further
  function renderTree() {
    var m = METRICS[S.metric], maxv = 0;
    R.forEach(function (r) { if (shown(r)) maxv = Math.max(maxv, Math.abs(value(r))); });
    // Shares are of the program's T_p whatever the metric: the program's T_o nets negative classes
    // (super-linear work) against the positive ones and can be near 0, where shares of it read
    // as thousands of percent.
    var base = tp(root), rows = treeRows();
    treeOrder = [];
    el('tree').innerHTML = rows.map(function (x) {
      var pad = 'padding-left:' + (0.3 + 1.1 * Math.min(x.depth, INDENT_LEVELS)) + 'em';
      if (x.small) {
        var sum = 0;
        x.small.forEach(function (c) { sum += tp(c); });
        return '<div class="trow small" data-small="' + x.parent.id + '" role="treeitem" aria-level="' + (x.depth + 1) + '">' +
          '<span class="name" style="' + pad + '"><span class="tog">&#8943;</span>' + x.small.length +
          ' small region(s), T_p below 0.1% of the program (' + fs(sum) + ' s in all): show</span><span></span><span></span><span></span><span></span></div>';
      }
      var r = x.r, v = value(r), has = children(r).length > 0;
      treeOrder.push(r.id);
      var bg = maxv > 0 && v > 0 ? heatOf(m.colour, v / maxv) : '#fff';
      return '<div class="trow' + (present(r) ? '' : ' dim') + '" role="treeitem" data-id="' +
          r.id + '" aria-level="' + (x.depth + 1) + '" aria-selected="' + (r.id === S.region) +
          '"' + (has ? ' aria-expanded="' + !!S.open[r.id] + '"' : '') + '>' +
          '<span class="name" style="' + pad + '"><span class="tog">' +
          (has ? (S.open[r.id] ? '&#9662;' : '&#9656;') : '') + '</span>' +
          (x.depth > INDENT_LEVELS ? '<span class="note">[' + x.depth + '] </span>' : '') +
          esc(r.label) + (r.folded ? ' <span class="note">(recursive)</span>' : '') + '</span>' +
          '<span class="loc">' + esc(r.loc) + '</span>' +
          '<span class="val num" style="background:' + bg + '" title="' + esc(m.name) +
          (S.own ? ' (own)' : '') + '">' + fs(v) + '</span>' +
          '<span class="num" title="share of the program&rsquo;s T_p">' + pct(v, base) + '</span>' +
          '<span title="classes as shares of T_p">' + classBar(r, tp(r), 'mini') + '</span></div>';
    }).join('');
  }
  function openPathTo(id) {
    var r = byId[id];
    for (var a = r; a && a.parent !== null; ) {
      a = byId[a.parent];
      if (a) { S.open[a.id] = 1; if (a.folded && !S.unfold) S.unfold = true; }
    }
    if (r && r.folded && !S.unfold) S.unfold = true;
    var u = el('unfold');
    if (u) u.checked = S.unfold;
  }

  /* ---------------------------------------------------------------- flat profile */
  var FLAT_COLS = [['name', 'region'], ['loc', 'location'], ['paths', 'paths'], ['tp', 'T_p'], ['to', 'T_o']];
  CL.forEach(function (c, i) { FLAT_COLS.push(['c' + i, c.short]); });
  function flatRows() {
    var mode = S.flat.mode, rows = [];
    function vals(r) {
      var o = {}, own = mode !== 'inclusive';
      ['tp', 'to'].concat(CL.map(function (c, i) { return 'c' + i; })).forEach(function (m) { o[m] = own ? mown(r, m) : mval(r, m); });
      return o;
    }
    R.forEach(function (r) {
      if (!shown(r) || !present(r)) return;
      rows.push({ ids: [r.id], best: r, name: r.label, loc: r.loc, kind: r.kind, func: r.func, v: vals(r) });
    });
    if (mode === 'bottomup') { // one row per region (label and location), call paths merged
      var map = {}, merged = [];
      rows.forEach(function (x) {
        var k = x.kind + '\u0000' + x.name + '\u0000' + x.loc, m = map[k];
        if (!m) { m = map[k] = { ids: [], best: x.best, name: x.name, loc: x.loc, kind: x.kind, func: x.func, v: {} }; merged.push(m); }
        m.ids.push(x.best.id);
        for (var key in x.v) m.v[key] = (m.v[key] || 0) + x.v[key];
        if (tp(x.best) > tp(m.best)) m.best = x.best;
      });
      rows = merged;
    }
    var q = S.flat.filter.toLowerCase();
    if (q) rows = rows.filter(function (x) {
      return (x.name + ' ' + x.loc + ' ' + x.kind + ' ' + (x.func || '')).toLowerCase().indexOf(q) >= 0;
    });
    var key = S.flat.key, dir = S.flat.dir;
    rows.sort(function (a, b) {
      var x = key === 'name' || key === 'loc' ? a[key] : key === 'paths' ? a.ids.length : a.v[key];
      var y = key === 'name' || key === 'loc' ? b[key] : key === 'paths' ? b.ids.length : b.v[key];
      if (typeof x === 'string') return dir * x.localeCompare(y);
      return dir * (x - y);
    });
    return rows;
  }
  var flatOrder = [];
  function renderFlatShell() {
    el('panel-flat').innerHTML = '<div class="flat-controls"><input type="search" id="filter" placeholder="filter regions (/)" ' +
      'aria-label="filter regions"><select id="flat-mode" aria-label="rows">' +
      '<option value="bottomup">bottom-up: one row per region, own values of its call paths summed</option>' +
      '<option value="paths">one row per call path, own values</option>' +
      '<option value="inclusive">one row per call path, inclusive values</option></select>' +
      '<span class="note" id="flat-count"></span></div><div class="scroll"><table class="flat" id="flat" tabindex="0"><thead><tr>' +
      FLAT_COLS.map(function (c) {
        return '<th class="' + (c[0] === 'name' ? 'name' : '') + '" data-sort="' + c[0] + '"><button title="sort by ' + esc(c[1]) + '">' +
          esc(c[1]) + '</button></th>';
      }).join('') + '<th class="name">classes (share of T_p)</th></tr></thead><tbody></tbody></table></div>';
  }
  function renderFlat() {
    var rows = flatRows(), shownRows = rows.slice(0, 2000);
    flatOrder = shownRows;
    var total = R.filter(function (r) { return shown(r) && present(r); }).length;
    el('flat-count').textContent = rows.length + ' row(s)' + (S.flat.filter ? ' match' : '') +
      (rows.length > shownRows.length ? ', the first 2000 shown' : '') + ' (' + total + ' call paths)';
    document.querySelectorAll('#flat th[data-sort]').forEach(function (th) {
      var k = th.getAttribute('data-sort');
      if (k === S.flat.key) th.setAttribute('aria-sort', S.flat.dir < 0 ? 'descending' : 'ascending');
      else th.removeAttribute('aria-sort');
    });
    el('flat').tBodies[0].innerHTML = shownRows.map(function (x, i) {
      var bar = '<div class="sbar mini">';
      for (var c = 0; c < NC; ++c) {
        var v = x.v['c' + c];
        if (v > 0 && x.v.tp > 0) bar += '<span class="seg ' + CL[c].key + '" style="width:' + Math.min(100, 100 * v / x.v.tp).toFixed(2) +
          '%;background:' + CL[c].color + '"></span>';
      }
      bar += '</div>';
      var sel = x.ids.indexOf(S.region) >= 0;
      return '<tr data-row="' + i + '" data-id="' + x.best.id + '"' + (sel ? ' class="sel"' : '') + '>' +
        '<td class="name">' + esc(x.name) + '</td><td class="loc">' + esc(x.loc) + '</td><td>' + x.ids.length + '</td>' +
        '<td>' + fs(x.v.tp) + '</td><td>' + fs(x.v.to) + '</td>' +
        CL.map(function (c, j) { return '<td>' + fs(x.v['c' + j]) + '</td>'; }).join('') + '<td class="name">' + bar + '</td></tr>';
    }).join('');
  }

  /* ---------------------------------------------------------------- system pane */
  // Cube's third pane: the picked region's time on every PE (ranks, then their threads; columns
  // of PEs on large runs). A click on a PE shows its values in the metric pane and the call tree.
  function renderSystem() {
    var box = el('system');
    if (!box) return;
    var r = S.region !== null ? byId[S.region] : root, d = D.distribution, vals = peVals(r), n = vals.v.length, hi = 0, last = null;
    var ranks = d.per_column === 1 && d.pes.length > 0 && d.pes[0][0] >= 0;
    vals.v.forEach(function (v) { hi = Math.max(hi, v); });
    var s = '<div class="mrow mhead"><span>' + esc(label(r)) + ' on</span><span class="num">time s</span><span class="num">' +
      (vals.w ? 'wait s' : '') + '</span></div>';
    for (var i = 0; i < n; ++i) {
      if (ranks && d.pes[i][0] !== last) {
        last = d.pes[i][0];
        var longest = 0;
        for (var j = i; j < n && d.pes[j][0] === last; ++j) longest = Math.max(longest, vals.v[j]);
        s += '<div class="mrow srank"><span class="name">rank ' + last + '</span><span class="num" title="its longest thread">' + fs(longest) +
          '</span><span></span></div>';
      }
      s += '<div class="mrow" role="treeitem" data-pe="' + i + '" data-v="' + vals.v[i] + '" aria-selected="' + (S.pe === i) + '">' +
        '<span class="name" style="padding-left:' + (ranks ? 1.4 : 0.3) + 'em">' + esc(ranks ? 'thread ' + d.pes[i][1] : peName(i)) + '</span>' +
        '<span class="num" style="background:' + (hi > 0 && vals.v[i] > 0 ? heatOf('#6a51a3', vals.v[i] / hi) : '#fff') + '">' + fs(vals.v[i]) +
        '</span><span class="num">' + (vals.w ? fs(vals.w[i]) : '') + '</span></div>';
    }
    box.innerHTML = s;
    document.querySelectorAll('#pe-bars rect.pe').forEach(function (e) { e.classList.toggle('sel', +e.getAttribute('data-pe') === S.pe); });
  }
  function pickPe(i) {
    S.pe = i;
    if (i === null && isPeMetric(S.metric)) S.metric = 'to';
    if (i !== null && !isPeMetric(S.metric)) S.metric = 'pe:t';
    renderMetrics();
    renderTree();
    renderSystem();
  }

  /* ---------------------------------------------------------------- callers (bottom-up) */
  // As hpcviewer's callers view: one row per region (its call paths merged, own values summed);
  // unfolding a row shows who called it, each caller with the part of the cost that came through
  // it, and so on up to the program. A row holds pairs [instance, ancestor reached].
  function regionKey(r) { return r.kind + '\u0000' + r.label + '\u0000' + r.loc; }
  function callerGroups(pairs, up) {
    var map = {}, out = [];
    pairs.forEach(function (p) {
      var a = up ? (byId[p[1]].parent === null ? null : byId[byId[p[1]].parent]) : byId[p[1]];
      if (!a) return;
      var k = regionKey(a), g = map[k];
      if (!g) { g = map[k] = { key: k, r: a, pairs: [], v: 0, t: 0 }; out.push(g); }
      g.pairs.push([p[0], a.id]);
      g.v += mown(byId[p[0]], S.metric);
      g.t += mown(byId[p[0]], 'tp');
    });
    out.sort(function (x, y) { return y.v - x.v || y.t - x.t; });
    return out;
  }
  var callerRows = [];
  function renderCallers() {
    var p = el('panel-callers');
    if (!p) return;
    var m = METRICS[S.metric], top = [];
    R.forEach(function (r) { if (shown(r) && present(r)) top.push([r.id, r.id]); });
    var stack = callerGroups(top, false).reverse().map(function (g) { return { g: g, depth: 0, path: g.key }; });
    callerRows = [];
    var s = '<p class="note">Callers (bottom-up): each region with its own ' + esc(m.name) + ' summed over its call paths; ' +
      '&#9656; shows who called it and how much of it came through each caller. Own T_p beside it.</p><div id="callers" class="scroll" role="tree" tabindex="0">' +
      '<div class="trow mhead"><span>region &#8592; its callers</span><span>location</span><span class="num">own ' + esc(m.name) +
      '</span><span class="num">own T_p</span><span></span></div>';
    while (stack.length) {
      var x = stack.pop(), i = callerRows.length, open = !!S.callers[x.path];
      callerRows.push(x);
      var ups = open ? callerGroups(x.g.pairs, true) : null, has = x.g.pairs.some(function (q) { return byId[q[1]].parent !== null; });
      s += '<div class="trow crow" role="treeitem" data-crow="' + i + '" data-id="' + x.g.r.id + '" data-v="' + x.g.v + '" aria-level="' + (x.depth + 1) +
        '"' + (has ? ' aria-expanded="' + open + '"' : '') + '><span class="name" style="padding-left:' + (0.3 + 1.1 * Math.min(x.depth, INDENT_LEVELS)) +
        'em"><span class="tog">' + (has ? (open ? '&#9662;' : '&#9656;') : '') + '</span>' + (x.depth ? '<span class="note">&#8592; </span>' : '') +
        esc(x.g.r.label) + '</span><span class="loc">' + esc(x.g.r.loc) + '</span><span class="val num">' + fs(x.g.v) + '</span>' +
        '<span class="num" title="own T_p">' + fs(x.g.t) + '</span><span></span></div>';
      if (ups) for (var k = ups.length - 1; k >= 0; --k) stack.push({ g: ups[k], depth: x.depth + 1, path: x.path + '\u0001' + ups[k].key });
    }
    p.innerHTML = s + '</div>';
  }

  /* ---------------------------------------------------------------- region pane */
  function renderRegion() {
    var box = el('region'), r = S.region !== null ? byId[S.region] : null;
    if (!r) { box.innerHTML = '<p class="note">Pick a region (call tree, icicle graph, flat profile or a finding) to see its details here.</p>'; return; }
    var s = '<h3>' + esc(label(r)) + '</h3><div class="path">' + esc(pathOf(r)) + '</div>';
    s += STUDY ? studyRegion(r) : experimentRegion(r);
    var fl = (D.findings || []).filter(function (f) { return f.node === r.id; });
    if (fl.length) s += '<h4>Findings here</h4><ol class="findings">' + fl.map(function (f) {
      return '<li>' + esc(f.text) + findingSource(f) + '</li>';
    }).join('') + '</ol>';
    s += sampledHtml(r);
    s += sourceHtml(r);
    box.innerHTML = s;
    if (!STUDY) drawStrip(r);
  }
  /* Call-path sampling (docs/sampling.md): the functions sampled while the region was a thread's
     current region, by own time, with one standard deviation and the hottest line. */
  function sampledHtml(r) {
    var reg = ((D.sampled || {}).regions || []).filter(function (x) { return x.id === r.id; })[0];
    if (!reg || !reg.functions.length) return '';
    return '<h4>Sampled here <small>' + reg.cpu_s.toFixed(3) + ' s on a CPU, not in a region below</small></h4>' +
      '<table class="kv"><tr><td><b>function</b></td><td><b>own s</b></td><td><b>&plusmn;</b></td><td><b>hottest line</b></td></tr>' +
      reg.functions.map(function (f) {
        return '<tr><td>' + esc(f['function']) + '</td><td>' + f.own_s.toFixed(3) + '</td><td>' +
          f.own_error_s.toFixed(3) + '</td><td>' + esc(f.hottest_line) + '</td></tr>';
      }).join('') + '</table>';
  }
  function kv(rows) {
    return '<table class="kv">' + rows.map(function (x) { return '<tr><td>' + x[0] + '</td><td>' + x[1] + '</td></tr>'; }).join('') + '</table>';
  }
  function classesHtml(r) {
    var s = classBar(r, tp(r), 'big') + '<table class="cls">';
    for (var i = 0; i < NC; ++i) {
      var v = cls(r, i);
      s += '<tr class="' + (v < 0 ? 'neg' : '') + '"><td>' + swatch(i) + esc(CLASS_NAMES[CL[i].key]) + '</td><td class="num">' + fs(v) +
        ' s</td><td class="num">' + pct(v, tp(r)) + '</td></tr>';
      if (!STUDY) Object.keys(r.sub).filter(function (k) { return k.split('.')[0] === CL[i].key; }).sort(function (a, b) {
        return Math.abs(r.sub[b]) - Math.abs(r.sub[a]);
      }).forEach(function (k) {
        s += '<tr class="subrow' + (r.sub[k] < 0 ? ' neg' : '') + '"><td>' + esc(k.substr(k.indexOf('.') + 1)) + '</td><td class="num">' +
          fs(r.sub[k]) + ' s</td><td class="num">' + pct(r.sub[k], tp(r)) + '</td></tr>';
      });
    }
    return s + '</table>';
  }
  function experimentRegion(r) {
    var s = kv([
      ['T_p', fs(r.tp) + ' s (wall time: its longest PE)'],
      ['T_s', fs(r.ts) + ' s' + (D.estimated ? ' (estimated: no reference)' : ' (reference)')],
      ['T_o', fs(r.to) + ' s, ' + pct(r.to, r.tp) + ' of T_p'],
      ['speedup', fx(r.speedup) + ', efficiency ' + fx(r.eff)],
      ['visits', String(r.visits)],
      ['PEs', r.pes + ' of ' + D.p + ' ran it'],
      ['imbalance', 'max/mean ' + fx(r.imb) + (r.most ? ' (longest: ' + esc(r.most) + ', shortest: ' + esc(r.least) + ')' : '')]
    ].concat(r.mpi ? [['MPI', r.mpi[0] + ' bytes sent, ' + r.mpi[1] + ' received; ' + fs(r.mpi[2]) + ' s waiting, ' + fs(r.mpi[3]) +
      ' s transfer (the collector&rsquo;s split, summed over ranks)']] : []));
    s += '<h4>Overhead classes <small class="note">(s of wall time; they sum to T_o)</small></h4>' + classesHtml(r);
    s += '<h4>Time per PE <small class="note">(' + esc(D.distribution.mode === 'exact' ? 'each PE' : 'aggregated') + ')</small></h4>';
    s += '<canvas id="pe-strip" height="40" aria-label="time per PE"></canvas>' +
      '<div class="heat-legend"><span>0</span><span class="grad" style="background:linear-gradient(90deg,' +
      [0, 0.25, 0.5, 0.75, 1].map(peColour).join(',') + ')"></span><span>' + fs(r.st[2]) + ' s</span>' +
      '<span>&middot; grey: did not run</span></div>';
    s += peBars(r);
    s += '<p class="note">min ' + fs(r.st[0]) + ' s, mean ' + fs(r.st[1]) + ' s, max ' + fs(r.st[2]) + ' s over the PEs that ran it' +
      (D.distribution.mode === 'exact' ? '' : '. ' + esc(D.distribution.note)) + '</p>';
    return s;
  }
  // Per-PE (or per-column) times of a region: {v: [...], m: [...] or null, w: [...] or null}.
  function peValues(r) {
    var d = D.distribution;
    if (d.mode === 'exact') return { v: r.pe.t, w: r.pe.w, visits: r.pe.v, m: null };
    var q = b64(r.pe.q), v = new Array(q.length), m = null;
    for (var i = 0; i < q.length; ++i) v[i] = q[i] / 255 * r.pe.max;
    if (r.pe.m) { var qm = b64(r.pe.m); m = new Array(qm.length); for (var j = 0; j < qm.length; ++j) m[j] = qm[j] / 255 * r.pe.max; }
    return { v: v, m: m, w: null, visits: null };
  }
  function peName(i) {
    var d = D.distribution, k = d.per_column, a = i * k, b = Math.min(d.pes.length, a + k) - 1;
    function one(j) { var p = d.pes[j]; return p[0] >= 0 ? 'rank ' + p[0] + ' thread ' + p[1] : 'thread ' + p[1]; }
    return k === 1 ? one(a) : one(a) + ' .. ' + one(b) + ' (' + (b - a + 1) + ' PEs)';
  }
  function peTip(r, i, vals) {
    var s = '<b>' + esc(peName(i)) + '</b><br>' + (vals.m ? 'longest ' + fs(vals.v[i]) + ' s, mean ' + fs(vals.m[i]) + ' s' :
      'time ' + fs(vals.v[i]) + ' s');
    if (vals.w) s += '<br>wait ' + fs(vals.w[i]) + ' s, visits ' + vals.visits[i];
    var share = peShare(r);
    if (share > 0 && vals.v[i] > 0) s += '<br>' + (vals.v[i] > share ? fs(vals.v[i] - share) + ' s beyond' : fs(share - vals.v[i]) + ' s below') +
      ' its share of T_s (T_s/p ' + fs(share) + ' s)';
    if (vals.v[i] < r.tp && vals.v[i] > 0) s += '<br>' + fs(r.tp - vals.v[i]) + ' s shorter than T_p';
    if (D.distribution.mode !== 'exact') s += '<br><span class="note">to 1/255 of the longest</span>';
    return s;
  }
  var stripState = null;
  // Cells per row of the heat strip: one rank per row when every rank has the same 2 to 64
  // threads (exact times), else rows of 64.
  function stripRow(n) {
    var d = D.distribution, per = {}, t = 0, same = true;
    if (d.mode === 'exact' && d.pes.length && d.pes[0][0] >= 0) {
      d.pes.forEach(function (p) { per[p[0]] = (per[p[0]] || 0) + 1; });
      Object.keys(per).forEach(function (k) { if (!t) t = per[k]; else if (per[k] !== t) same = false; });
      if (same && t >= 2 && t <= 64 && Object.keys(per).length > 1) return t;
    }
    return n > 64 ? 64 : Math.max(1, n);
  }
  function drawStrip(r) {
    var cv = el('pe-strip');
    if (!cv) return;
    var vals = peValues(r), n = vals.v.length, perRow = stripRow(n), rows = Math.ceil(n / perRow);
    var w = Math.max(200, cv.parentNode.clientWidth || 380), cellH = rows > 1 ? Math.max(4, Math.min(14, Math.floor(160 / rows))) : 28;
    cv.width = w;
    cv.height = rows * cellH;
    var g = cv.getContext('2d'), cw = w / perRow, hi = r.st[2] || 1;
    for (var i = 0; i < n; ++i) {
      var x = (i % perRow) * cw, y = Math.floor(i / perRow) * cellH, ran = vals.v[i] > 0 || (vals.visits && vals.visits[i] > 0);
      g.fillStyle = ran ? peColour(vals.v[i] / hi) : '#e4e4e4';
      g.fillRect(Math.floor(x), y, Math.max(1, Math.ceil(x + cw) - Math.floor(x) - (cw > 3 ? 1 : 0)), cellH - (cellH > 5 ? 1 : 0));
    }
    stripState = { r: r, vals: vals, perRow: perRow, cw: cw, cellH: cellH, n: n };
  }
  // Each PE's share of the region's reference time, T_s/p: what a PE would spend with no
  // overhead. A PE's time above it is that PE's overhead, whatever its class: the view of the
  // threads that suffer overheads the collector does not time per PE (spin-waiting on flush is
  // found from the region's flushes against the reference, late arrival, extra work).
  function peShare(r) { return r.ts > 0 && D.p > 0 ? r.ts / D.p : 0; }
  function peBars(r) {
    var vals = peValues(r), n = vals.v.length;
    if (n > 128) return '';
    var share = peShare(r), W = 380, H = 120, left = 36, bw = (W - left - 4) / n, hi = Math.max(r.tp, r.st[2], share) || 1, s = '';
    s += '<svg class="bars" id="pe-bars" viewBox="0 0 ' + W + ' ' + (H + 18) + '" role="img" aria-label="time per PE">';
    s += '<line x1="' + left + '" y1="' + H + '" x2="' + W + '" y2="' + H + '" stroke="#555"/>';
    [0, 0.5, 1].forEach(function (f) {
      s += '<text x="' + (left - 3) + '" y="' + (H - f * (H - 6) + 4) + '" text-anchor="end" font-size="9">' + fs(hi * f) + '</text>';
    });
    for (var i = 0; i < n; ++i) {
      var v = vals.v[i], h = (H - 6) * v / hi, x = left + i * bw, w = Math.max(1, bw - (bw > 4 ? 1 : 0));
      s += '<rect class="pe" data-pe="' + i + '" x="' + x.toFixed(2) + '" y="' + (H - h).toFixed(2) + '" width="' + w.toFixed(2) +
        '" height="' + Math.max(0, h).toFixed(2) + '" fill="' + peColour(v / hi) + '"/>';
      if (vals.w && vals.w[i] > 0) {
        var wh = (H - 6) * Math.min(vals.w[i], v) / hi;
        s += '<rect class="pe wait" data-pe="' + i + '" x="' + x.toFixed(2) + '" y="' + (H - wh).toFixed(2) + '" width="' + w.toFixed(2) +
          '" height="' + wh.toFixed(2) + '" fill="url(#hatch)" />';
      }
      if (n <= 32) s += '<text x="' + (x + bw / 2).toFixed(1) + '" y="' + (H + 11) + '" text-anchor="middle" font-size="8">' + i + '</text>';
    }
    var mean = r.st[1];
    s += '<line x1="' + left + '" x2="' + W + '" y1="' + (H - (H - 6) * mean / hi).toFixed(1) + '" y2="' + (H - (H - 6) * mean / hi).toFixed(1) +
      '" stroke="#1f5fa8" stroke-dasharray="4 3"><title>mean over the PEs that ran it</title></line>';
    if (share > 0) {
      var sy = (H - (H - 6) * share / hi).toFixed(1);
      s += '<line class="share" x1="' + left + '" x2="' + W + '" y1="' + sy + '" y2="' + sy + '" stroke="#1a7a3a" stroke-width="2">' +
        '<title>T_s/p = ' + fs(share) + ' s: each PE&rsquo;s share of the ' + (D.estimated ? 'estimated ' : '') + 'reference time; ' +
        'above it, the PE&rsquo;s overhead</title></line><text class="share" x="' + (W - 4) + '" y="' + (+sy - 3).toFixed(1) +
        '" text-anchor="end" font-size="10" font-weight="600" fill="#1a7a3a" stroke="#fff" stroke-width="3" paint-order="stroke">' +
        'T_s/p</text>';
    }
    s += '<defs><pattern id="hatch" width="4" height="4" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">' +
      '<rect width="4" height="4" fill="rgba(255,255,255,.35)"/><line x1="0" y1="0" x2="0" y2="4" stroke="#333" stroke-width="1.2"/></pattern></defs>';
    s += '</svg><div class="note" id="pe-note">bars: time per PE in PE order' + (vals.w ? ', hatched: waiting the collector timed' : '') +
      '; dashed: mean' + (share > 0 ? '; green: T_s/p = ' + fs(share) + ' s, each PE&rsquo;s share of the ' + (D.estimated ? 'estimated ' : '') +
      'reference time: a bar above it is that PE&rsquo;s overhead (' + fs(Math.max(0, r.st[1] - share)) + ' s per PE on average)' : '') +
      '. Imbalance shows as uneven bars.' + (sub(r, 'synchronization.spin_wait') > 0 ? ' Spin-waiting (' + fs(sub(r, 'synchronization.spin_wait')) +
      ' s) is found from the region&rsquo;s flushes against the reference, not timed per PE: it is in the bars above the green line, not hatched.' : '') +
      '</div>';
    return s;
  }
  function sourceHtml(r) {
    var srcs = D.sources;
    if (r.src === undefined || !srcs || !srcs.files[r.src]) return '';
    var f = srcs.files[r.src], ch = null;
    f.chunks.forEach(function (c) { if (r.line >= c[0] && r.line < c[0] + c[1].length) ch = c; });
    if (!ch) return '';
    var s = '<h4>Source <small class="note">' + esc(f.file) + ':' + r.line + '</small></h4><pre class="src" id="source">';
    ch[1].forEach(function (line, i) {
      var n = ch[0] + i;
      s += '<div' + (n === r.line ? ' class="hl"' : '') + '><span class="ln">' + n + '</span>' + esc(line) + '</div>';
    });
    return s + '</pre>';
  }

  /* ---------------------------------------------------------------- study charts */
  function chartFrame(W, H, pad) { return { W: W, H: H, l: pad[0], r: pad[1], t: pad[2], b: pad[3] }; }
  // Configurations evenly spaced (1, 2, 4, 8 read like a log scale), half a step from the edges.
  function xAt(f, i) { return f.l + (i + 0.5) * (f.W - f.l - f.r) / Math.max(1, configs.length); }
  function axisX(f) {
    var s = '<line x1="' + f.l + '" x2="' + (f.W - f.r) + '" y1="' + (f.H - f.b) + '" y2="' + (f.H - f.b) + '" stroke="#555"/>';
    configs.forEach(function (c, i) {
      s += '<text x="' + xAt(f, i).toFixed(1) + '" y="' + (f.H - f.b + 13) + '" text-anchor="middle">' + esc(c.label) + '</text>';
    });
    return s + '<text x="' + ((f.W + f.l - f.r) / 2) + '" y="' + (f.H - 2) + '" text-anchor="middle" fill="#666">p</text>';
  }
  function axisY(f, lo, hi, unit) {
    var s = '';
    for (var k = 0; k <= 4; ++k) {
      var v = lo + (hi - lo) * k / 4, y = f.H - f.b - (f.H - f.t - f.b) * k / 4;
      s += '<line x1="' + f.l + '" x2="' + (f.W - f.r) + '" y1="' + y.toFixed(1) + '" y2="' + y.toFixed(1) + '" stroke="#eee"/>' +
        '<text x="' + (f.l - 4) + '" y="' + (y + 4).toFixed(1) + '" text-anchor="end">' + (unit === 's' ? fs(v) : fx(v, 1)) + '</text>';
    }
    return s;
  }
  var SERIES = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#8c564b', '#7f7f7f'];
  function speedupChart(regions, id) {
    var f = chartFrame(300, 190 + 12 * regions.length, [40, 8, 20 + 12 * regions.length, 30]), hi = 1;
    configs.forEach(function (c) { hi = Math.max(hi, c.p); });
    regions.forEach(function (r) { r.cells.forEach(function (c) { if (c && c.speedup !== null) hi = Math.max(hi, c.speedup); }); });
    function y(v) { return f.H - f.b - (f.H - f.t - f.b) * v / hi; }
    var s = '<svg class="chart" id="speedup-' + id + '" viewBox="0 0 ' + f.W + ' ' + f.H + '" role="img" aria-label="speedup vs p">' +
      '<text x="' + f.l + '" y="13" font-weight="600">speedup vs p <tspan fill="#888" font-weight="400">(dashed: ideal)</tspan></text>' +
      axisY(f, 0, hi, 'x') + axisX(f);
    s += '<polyline fill="none" stroke="#999" stroke-dasharray="5 4" points="' + configs.map(function (c, i) {
      return xAt(f, i).toFixed(1) + ',' + y(c.p).toFixed(1);
    }).join(' ') + '"><title>ideal (= p)</title></polyline>';
    regions.forEach(function (r, k) {
      var pts = [];
      r.cells.forEach(function (c, i) { if (c && c.speedup !== null) pts.push([xAt(f, i), y(c.speedup), c.speedup, i]); });
      var col = SERIES[k % SERIES.length];
      s += '<polyline class="series" fill="none" stroke="' + col + '" stroke-width="2" points="' + pts.map(function (p) {
        return p[0].toFixed(1) + ',' + p[1].toFixed(1);
      }).join(' ') + '"/>';
      pts.forEach(function (p) {
        s += '<circle cx="' + p[0].toFixed(1) + '" cy="' + p[1].toFixed(1) + '" r="3" fill="' + col + '"><title>' + esc(label(r)) +
          ': p = ' + esc(configs[p[3]].label) + ', speedup ' + fx(p[2]) + '</title></circle>';
      });
      s += '<text x="' + f.l + '" y="' + (14 + 12 * (k + 1)) + '" fill="' + col + '">&#9644; ' + esc(label(r).substr(0, 44)) + '</text>';
    });
    if (!regions.some(function (r) { return r.ts !== null; }))
      s += '<text x="' + (f.W / 2) + '" y="' + (f.H / 2) + '" text-anchor="middle" fill="#666">no speedup: the reference did not run it</text>';
    return s + '</svg>';
  }
  function stackedChart(r) {
    var f = chartFrame(300, 190, [46, 10, 22, 30]), lo = 0, hi = 0;
    r.cells.forEach(function (c) {
      if (!c) return;
      var pos = 0, neg = 0;
      c.c.forEach(function (v) { if (v > 0) pos += v; else neg += v; });
      hi = Math.max(hi, pos, c.to);
      lo = Math.min(lo, neg, c.to);
    });
    if (-lo < 0.02 * hi) lo = 0; // rounding noise below zero would only squeeze the scale
    if (hi === lo) hi = lo + 1e-3;
    function y(v) { return f.H - f.b - (f.H - f.t - f.b) * (Math.max(lo, v) - lo) / (hi - lo); }
    var s = '<svg class="chart" id="classes-' + r.id + '" viewBox="0 0 ' + f.W + ' ' + f.H + '" role="img" aria-label="overhead classes vs p">' +
      '<text x="' + f.l + '" y="13" font-weight="600">overhead classes vs p (s)</text>' + axisY(f, lo, hi, 's') + axisX(f);
    var n = configs.length, bw = Math.min(34, (f.W - f.l - f.r) / Math.max(1, n) * 0.6);
    r.cells.forEach(function (c, i) {
      if (!c) return;
      var up = 0, down = 0, x = xAt(f, i) - bw / 2;
      c.c.forEach(function (v, k) {
        if (v === 0) return;
        var a = v > 0 ? up : down, b = a + v;
        if (v > 0) up = b; else down = b;
        s += '<rect class="seg ' + CL[k].key + '" x="' + x.toFixed(1) + '" width="' + bw.toFixed(1) + '" y="' + Math.min(y(a), y(b)).toFixed(1) +
          '" height="' + Math.abs(y(a) - y(b)).toFixed(1) + '" fill="' + CL[k].color + '" stroke="#666" stroke-width=".4"><title>p = ' +
          esc(configs[i].label) + ': ' + CL[k].key + ' ' + fs(v) + ' s</title></rect>';
      });
      s += '<circle cx="' + xAt(f, i).toFixed(1) + '" cy="' + y(c.to).toFixed(1) + '" r="3" fill="#000"><title>p = ' + esc(configs[i].label) +
        ': T_o ' + fs(c.to) + ' s</title></circle>';
    });
    s += '<line x1="' + f.l + '" x2="' + (f.W - f.r) + '" y1="' + y(0).toFixed(1) + '" y2="' + y(0).toFixed(1) + '" stroke="#555"/>';
    return s + '</svg>';
  }
  function studyRegion(r) {
    var s = '<div class="charts">' + speedupChart(r === root ? [root] : [r, root], 'region') + stackedChart(r) + '</div>';
    s += '<p class="note">Bars: the six classes (median over repetitions; negative values below 0), dot: T_o. ' +
      'Speedup = T_s / median T_p' + (r.ts === null ? ' (none: the reference did not run this region)' : '') + '.</p>';
    s += '<div class="wide"><table class="cfgs"><thead><tr><th>p</th><th>reps</th><th>T_p s</th><th>min-max</th><th>speedup</th><th>eff.</th><th>T_o s</th>' +
      CL.map(function (c, i) { return '<th title="' + esc(c.key) + '">' + swatch(i) + esc(c.short) + '</th>'; }).join('') + '</tr></thead><tbody>';
    r.cells.forEach(function (c, i) {
      s += '<tr' + (i === S.config ? ' class="sel"' : '') + '><td>' + esc(configs[i].label) + '</td>';
      if (!c) { s += '<td colspan="' + (6 + NC) + '" style="text-align:left">not run</td></tr>'; return; }
      s += '<td>' + c.n + '</td><td>' + fs(c.t) + '</td><td>' + fs(c.tmin) + '-' + fs(c.tmax) + '</td><td>' + fx(c.speedup) + '</td><td>' +
        fx(c.eff) + '</td><td>' + fs(c.to) + '</td>' + c.c.map(function (v) { return '<td>' + fs(v) + '</td>'; }).join('') + '</tr>';
    });
    s += '</tbody></table></div>';
    configs.forEach(function (c) { if (c.cpu_note) s += '<p class="note cpu">' + esc(c.cpu_note) + '</p>'; });
    s += '<h4>At p = ' + esc(configs[S.config].label) + '</h4>' + (present(r) ? classesHtml(r) : '<p>not run at this p</p>');
    return s;
  }

  /* ---------------------------------------------------------------- region graph, about */
  function renderGraph() {
    var p = el('panel-graph');
    if (!p) return;
    var src = el('graph-source');
    p.innerHTML = '<p class="note">' + esc(D.graph_note || '') + (src ? ' <button class="link no-print" id="graph-fit">' +
      'natural size / fit width</button>' : '') + '</p><div class="graph-wrap fit" id="graph-wrap"></div>';
    if (src) {
      var svg = src.querySelector('svg');
      if (svg) { svg.id = 'region-graph'; el('graph-wrap').appendChild(svg); }
    }
    markGraph();
  }
  function markGraph() {
    document.querySelectorAll('#graph-wrap g.node').forEach(function (g) {
      var t = g.querySelector('title'), id = t ? t.textContent.replace(/^n/, '') : '';
      g.classList.toggle('sel', String(S.region) === id);
    });
  }
  function renderAbout() {
    var s = '<h2>Run</h2><table class="facts" id="facts">' + D.facts.map(function (x) {
      return '<tr><td>' + esc(x[0]) + '</td><td>' + esc(x[1]) + '</td></tr>';
    }).join('') + '</table>';
    if (STUDY) s += '<h4>Configurations</h4><table class="facts">' + configs.map(function (c) {
      return '<tr><td>p = ' + esc(c.label) + '</td><td>' + c.threads + ' thread(s) x ' + c.ranks + ' rank(s), ' + c.reps +
        ' repetition(s); POP load balance ' + fx(c.pop[0], 3) + ', communication ' + fx(c.pop[1], 3) + ', parallel efficiency ' +
        fx(c.pop[2], 3) + '</td></tr>';
    }).join('') + '</table>';
    s += '<h4>What this page holds</h4><ul class="note">';
    if (!STUDY) s += '<li>' + esc(D.distribution.note) + '</li>';
    if (D.folding) s += '<li>' + esc(D.folding) + '</li>';
    s += '<li>' + esc(D.sources ? D.sources.note : '') + '</li>';
    if (!STUDY) s += '<li>' + esc(D.graph_note || '') + '</li>';
    s +=
        '<li>T_o = T_p &minus; T_s/p; the six classes of a region sum to its T_o (seconds of wall time). Values are inclusive ' +
        '(a region holds its children); "own values" subtract the children&rsquo;s. The call tree&rsquo;s shares are of the program&rsquo;s T_p, ' +
        'for every metric: T_o can be near 0 where negative classes (super-linear work) offset the positive ones.</li></ul>';
    if (D.only_in_reference && D.only_in_reference.length) s += '<h4>Regions only in the reference (T_o = &minus;T_s/p)</h4><ul class="mono">' +
      D.only_in_reference.map(function (x) { return '<li>' + esc(x.path) + ': T_s ' + fs(x.ts) + ' s</li>'; }).join('') + '</ul>';
    s += '<h4>Classes</h4><dl class="keys">' + CL.map(function (c, i) {
      return '<dt>' + swatch(i) + esc(c.key) + '</dt><dd>' + esc(CLASS_HELP[c.key] || '') + '</dd>';
    }).join('') + '</dl><h4>Keys</h4>' + keysHtml();
    el('panel-about').innerHTML = s;
  }
  function keysHtml() {
    return '<dl class="keys">' + [
      ['?', 'this list'], ['1 .. ' + tabs.length, 'the tabs (' + tabs.map(function (t) { return t[1]; }).join(', ') + ')'],
      ['/', 'filter the flat profile'], ['Esc', 'close, clear the filter, zoom the icicle graph out'],
      ['&uarr; &darr;', 'previous / next row (metric pane, call tree, flat profile: click it or Tab to it first)'],
      ['&larr; &rarr;', 'call tree and metrics: fold / unfold, to the parent / first child'],
      ['Enter', 'call tree: fold or unfold the row; flat profile: show the row in the call tree'],
      ['o', 'own values on / off'], ['u', 'zoom the icicle graph out one level'],
      ['click', 'pick (a region, a metric); icicle graph: zoom; column title: sort (again: reverse)'],
      ['hover', 'the six classes (icicle graph), a PE&rsquo;s time (bars, heat strip)']
    ].map(function (k) { return '<dt>' + k[0] + '</dt><dd>' + k[1] + '</dd>'; }).join('') + '</dl>';
  }

  /* ---------------------------------------------------------------- actions */
  // Moves a mark (class or attribute) to the elements of region `id` inside `box`.
  function mark(box, sel, id, set) {
    document.querySelectorAll(box + ' ' + sel).forEach(function (e) { set(e, false); });
    document.querySelectorAll(box + ' [data-id="' + id + '"]').forEach(function (e) { set(e, true); });
  }
  function select(id, opts) {
    opts = opts || {};
    if (byId[id] === undefined) return;
    S.region = id;
    var wasShown = !!document.querySelector('#tree .trow[data-id="' + id + '"]'), z = byId[S.zoom];
    openPathTo(id);
    // Redrawn only when the row or the cell is not there yet: a pick on 500 regions stays quick.
    if (wasShown) mark('#tree', '.trow[aria-selected=true]', id, function (e, on) { e.setAttribute('aria-selected', String(on)); });
    else renderTree();
    if (z && !holds(z, id)) { S.zoom = root.id; renderFlame(); }
    else if (document.querySelector('#flame .fl[data-id="' + id + '"]')) mark('#flame', '.fl.sel', id, function (e, on) { e.classList.toggle('sel', on); });
    else renderFlame();
    renderMetrics();
    renderRegion();
    renderSystem();
    if (el('flat') && S.tab === 'flat') renderFlat();
    markGraph();
    document.querySelectorAll('ol.findings li.finding').forEach(function (li) {
      li.classList.toggle('sel', li.getAttribute('data-node') === String(id));
    });
    if (opts.scroll !== false) {
      var row = document.querySelector('#tree .trow[data-id="' + id + '"]');
      if (row && S.tab === 'tree') row.scrollIntoView({ block: 'nearest' });
    }
  }
  function setMetric(m) {
    if (!METRICS[m]) return;
    S.metric = m;
    renderMetrics();
    renderTree();
    if (S.tab === 'callers') renderCallers();
  }
  function setTab(t) {
    S.tab = t;
    tabs.forEach(function (x) {
      var p = el('panel-' + x[0]);
      if (p) p.hidden = x[0] !== t;
      el('tab-' + x[0]).setAttribute('aria-selected', String(x[0] === t));
    });
    if (t === 'flat') renderFlat();
    if (t === 'callers') renderCallers();
  }
  function setConfig(i) {
    S.config = i;
    renderSummary();
    renderFlame();
    renderMetrics();
    renderTree();
    renderFlat();
    renderRegion();
  }
  function toggle(id, open) {
    S.open[id] = open === undefined ? !S.open[id] : open;
    renderTree();
  }

  /* ---------------------------------------------------------------- events */
  document.addEventListener('click', function (ev) {
    var t = ev.target, x;
    hideTip();
    if ((x = t.closest('[data-tab]'))) return setTab(x.getAttribute('data-tab'));
    if ((x = t.closest('a[data-region]'))) return select(+x.getAttribute('data-region'));
    if ((x = t.closest('li.finding'))) { if (x.getAttribute('data-node') !== '') { setTab('tree'); select(+x.getAttribute('data-node')); } return; }
    if ((x = t.closest('#flame .fl'))) {
      var id = +x.getAttribute('data-id');
      S.zoom = id;
      renderFlame();
      select(id);
      return;
    }
    if ((x = t.closest('#metrics .mrow[data-metric]'))) {
      var m = x.getAttribute('data-metric');
      if (t.closest('.tog') && METRICS[m].kids.length && m !== 'to') { S.mopen[m] = !S.mopen[m]; renderMetrics(); return; }
      return setMetric(m);
    }
    if ((x = t.closest('#tree .trow[data-small]'))) { S.small[x.getAttribute('data-small')] = 1; return renderTree(); }
    if ((x = t.closest('#tree .trow[data-id]'))) {
      var rid = +x.getAttribute('data-id');
      if (t.closest('.tog') && children(byId[rid]).length) return toggle(rid);
      return select(rid, { scroll: false });
    }
    if ((x = t.closest('#flat th[data-sort]'))) {
      var k = x.getAttribute('data-sort');
      if (S.flat.key === k) S.flat.dir = -S.flat.dir; else { S.flat.key = k; S.flat.dir = k === 'name' || k === 'loc' ? 1 : -1; }
      return renderFlat();
    }
    if ((x = t.closest('#flat tbody tr[data-id]'))) return select(+x.getAttribute('data-id'), { scroll: false });
    if ((x = t.closest('#callers .crow'))) {
      var cr = callerRows[+x.getAttribute('data-crow')];
      if (t.closest('.tog')) { S.callers[cr.path] = !S.callers[cr.path]; return renderCallers(); }
      return select(cr.g.r.id, { scroll: false });
    }
    if ((x = t.closest('#system .mrow[data-pe]'))) { var pe = +x.getAttribute('data-pe'); return pickPe(S.pe === pe ? null : pe); }
    if (t.id === 'pe-clear') return pickPe(null);
    if ((x = t.closest('#graph-wrap g.node'))) {
      var tt = x.querySelector('title');
      if (tt) select(+tt.textContent.replace(/^n/, ''));
      return;
    }
    if (t.id === 'graph-fit') return el('graph-wrap').classList.toggle('fit');
    if (t.id === 'expand-all') { R.forEach(function (r) { S.open[r.id] = 1; S.small[r.id] = 1; }); return renderTree(); }
    if (t.id === 'collapse-all') { foldToWhatMatters(); S.small = {}; if (S.region !== null) openPathTo(S.region); return renderTree(); }
    if (t.id === 'help-btn') return toggleHelp();
  });
  document.addEventListener('dblclick', function (ev) {
    var x = ev.target.closest('#tree .trow[data-id]');
    if (x) toggle(+x.getAttribute('data-id'));
  });
  document.addEventListener('change', function (ev) {
    var t = ev.target;
    if (t.id === 'own') { S.own = t.checked; renderTree(); }
    else if (t.id === 'order') { S.order = t.value; renderTree(); }
    else if (t.id === 'unfold') { S.unfold = t.checked; renderTree(); renderFlame(); renderFlat(); renderCallers(); }
    else if (t.id === 'flat-mode') { S.flat.mode = t.value; renderFlat(); }
    else if (t.id === 'config') setConfig(+t.value);
  });
  document.addEventListener('input', function (ev) {
    if (ev.target.id === 'filter') { S.flat.filter = ev.target.value; renderFlat(); }
  });
  document.addEventListener('mouseover', function (ev) {
    var x = ev.target.closest('#flame .fl, #pe-bars rect.pe');
    if (!x) { if (ev.target.id !== 'pe-strip') hideTip(); return; } // also when the hovered cell was redrawn
    if (x.classList.contains('fl')) showTip(regionTip(byId[+x.getAttribute('data-id')]), ev);
    else { var r = byId[S.region]; showTip(peTip(r, +x.getAttribute('data-pe'), peValues(r)), ev); }
  });
  document.addEventListener('mouseout', function (ev) {
    if (ev.target.closest('#flame .fl, #pe-bars rect.pe')) hideTip();
  });
  document.addEventListener('mousemove', function (ev) {
    if (ev.target.id !== 'pe-strip' || !stripState) return;
    var st = stripState, b = ev.target.getBoundingClientRect();
    var sx = (ev.clientX - b.left) * ev.target.width / b.width, sy = (ev.clientY - b.top) * ev.target.height / b.height;
    var i = Math.floor(sy / st.cellH) * st.perRow + Math.floor(sx / st.cw);
    if (i >= 0 && i < st.n) showTip(peTip(st.r, i, st.vals), ev); else hideTip();
  });
  document.addEventListener('mouseleave', hideTip);
  function toggleHelp(force) {
    var hp = el('help');
    hp.innerHTML = '<h2>Keyboard and mouse</h2>' + keysHtml() + '<p class="note">Esc or ? closes this.</p>';
    hp.hidden = force === undefined ? !hp.hidden : !force;
  }
  function moveIn(list, cur, delta) {
    var i = list.indexOf(cur);
    i = i < 0 ? 0 : Math.max(0, Math.min(list.length - 1, i + delta));
    return list[i];
  }
  document.addEventListener('keydown', function (ev) {
    var t = ev.target, k = ev.key;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t.tagName === 'INPUT' || t.tagName === 'SELECT' || t.tagName === 'TEXTAREA') {
      if (k === 'Escape') {
        if (t.id === 'filter' && t.value) { t.value = ''; S.flat.filter = ''; renderFlat(); } else t.blur();
        ev.preventDefault();
      } else if (t.id === 'filter' && k === 'ArrowDown') { el('flat').focus(); ev.preventDefault(); }
      return;
    }
    if ((k === 'Enter' || k === ' ') && t.matches && t.matches('li.finding, a[data-region]')) { t.click(); return ev.preventDefault(); }
    var inTree = t.id === 'tree', inMetrics = t.id === 'metrics', inFlat = t.id === 'flat';
    if (inTree && handleTreeKey(k)) return ev.preventDefault();
    if (inMetrics && handleMetricKey(k)) return ev.preventDefault();
    if (inFlat && (k === 'ArrowDown' || k === 'ArrowUp' || k === 'Enter')) {
      if (k === 'Enter') { if (S.region !== null) { setTab('tree'); select(S.region); el('tree').focus(); } return ev.preventDefault(); }
      var ids = flatOrder.map(function (x) { return x.best.id; }), cur = ids.indexOf(S.region);
      var next = ids[cur < 0 ? 0 : Math.max(0, Math.min(ids.length - 1, cur + (k === 'ArrowDown' ? 1 : -1)))];
      if (next !== undefined) {
        select(next, { scroll: false });
        var row = document.querySelector('#flat tbody tr.sel');
        if (row) row.scrollIntoView({ block: 'nearest' });
      }
      return ev.preventDefault();
    }
    if (k === '?') { toggleHelp(); return ev.preventDefault(); }
    if (k === 'Escape') {
      if (!el('help').hidden) toggleHelp(false);
      else if (S.zoom !== root.id) { S.zoom = root.id; renderFlame(); }
      return;
    }
    if (k === '/') { setTab('flat'); el('filter').focus(); return ev.preventDefault(); }
    if (k >= '1' && k <= String(tabs.length)) { setTab(tabs[+k - 1][0]); return; }
    if (k === 'o') { S.own = !S.own; el('own').checked = S.own; renderTree(); return; }
    if (k === 'u') { var z = byId[S.zoom]; if (z && z.parent !== null) { S.zoom = z.parent; renderFlame(); } }
  });
  function handleTreeKey(k) {
    var cur = S.region !== null && treeOrder.indexOf(S.region) >= 0 ? S.region : null, r = cur !== null ? byId[cur] : null;
    if (k === 'ArrowDown' || k === 'ArrowUp') { select(moveIn(treeOrder, cur, k === 'ArrowDown' ? 1 : -1)); return true; }
    if (k === 'Home' || k === 'End') { select(treeOrder[k === 'Home' ? 0 : treeOrder.length - 1]); return true; }
    if (!r) return false;
    var has = children(r).length > 0;
    if (k === 'ArrowRight') { if (has && !S.open[r.id]) toggle(r.id, true); else if (has) select(sortedChildren(r)[0].id); return true; }
    if (k === 'ArrowLeft') { if (has && S.open[r.id]) toggle(r.id, false); else if (r.parent !== null) select(r.parent); return true; }
    if (k === 'Enter' || k === ' ') { if (has) toggle(r.id); return true; }
    return false;
  }
  function handleMetricKey(k) {
    var list = metricRows().map(function (x) { return x[0]; }), m = METRICS[S.metric];
    if (k === 'ArrowDown' || k === 'ArrowUp') { setMetric(moveIn(list, S.metric, k === 'ArrowDown' ? 1 : -1)); return true; }
    if (k === 'ArrowRight' && m.kids.length && m.key !== 'to') { S.mopen[m.key] = true; renderMetrics(); return true; }
    if (k === 'ArrowLeft') {
      if (S.mopen[m.key]) { S.mopen[m.key] = false; renderMetrics(); } else if (m.parent) setMetric(m.parent);
      return true;
    }
    return false;
  }
  window.addEventListener('resize', function () { if (S.region !== null && !STUDY) drawStrip(byId[S.region]); });

  /* ---------------------------------------------------------------- first screen */
  var started = performance.now();
  renderSummary();
  renderFlatShell();
  renderGraph();
  renderAbout();
  foldToWhatMatters();
  var first = (D.findings || []).filter(actionable).concat(D.findings || []).map(findingRegion).filter(function (r) { return r; })[0];
  if (!first) R.forEach(function (x) { if (x !== root && shown(x) && present(x) && (!first || ownTo(x) > ownTo(first))) first = x; });
  setTab('tree');
  if (STUDY) el('config').value = String(S.config);
  select((first || root).id, { scroll: false });
  renderFlat();
  document.documentElement.setAttribute('data-ready', '1');
  // For tests and scripts: the state, a few entry points and how long drawing took (not an API).
  window.scalea = { state: S, select: select, setMetric: setMetric, setTab: setTab, path: function (id) { return pathOf(byId[id]); },
    drawMs: performance.now() - started, readyMs: performance.now() };
})();
