"""The shared file's own script and style (render/share_page.py puts them inline; the page's CSP
lets this script run by its hash and nothing else).

The script reads the JSON data block, shows one graph's drawing at a time (cloned from its
<template>), and on a click shows the launch: its kernel's source (highlighted here, a few rules:
Pygments would take ~0.4 s of a 0.2 s budget on a 12-layer run and triple the file), its FX nodes,
source lines, fusion group and the pairs Inductor refused to fuse it with. Every artifact string
goes in with textContent (`h()` below), never as HTML; the only markup it inserts is our own
drawings (templates) and notes. The selection lives in the fragment: #graph=ID&group=G&launch=N.
"""

SCRIPT = r"""
(() => {
'use strict';
const D = JSON.parse(document.getElementById('cv-data').textContent);
const G = D.graphs, SVGNS = 'http://www.w3.org/2000/svg', PT = 96 / 72;
const S = {g: 0, view: '', launch: null, node: null, shown: null, zoom: null};
const MIN_FIT = 0.55;
const $ = (id) => document.getElementById(id);

function h(tag, props, ...kids) {  // an element; strings become text nodes, never markup
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') e.textContent = v;
    else if (k === 'cls') e.className = v;
    else if (k === 'on') for (const [ev, f] of Object.entries(v)) e.addEventListener(ev, f);
    else e.setAttribute(k, v);
  }
  for (const kid of kids.flat()) if (kid !== null && kid !== undefined && kid !== false) e.append(kid);
  return e;
}
const plural = (n, w, ws) => `${n} ${n === 1 ? w : (ws || w + 's')}`;
const graph = () => G[S.g];
const isTree = (gr) => Object.keys(gr.views).length > 1;

// --- the fragment: #graph=ID&group=G&launch=N ---------------------------------------------------
function readHash() {
  const p = new URLSearchParams(location.hash.slice(1));
  const gi = G.findIndex((g) => g.id === p.get('graph'));
  S.g = gi >= 0 ? gi : 0;
  const gr = graph(), n = Number(p.get('launch'));
  S.launch = p.get('launch') !== null && Number.isInteger(n) && n >= 0 && n < gr.launches.length ? n : null;
  S.node = null;
  const v = p.get('group');
  S.view = v !== null && gr.views[v] ? v : (S.launch !== null ? viewFor(gr, S.launch, '') : '');
}
function link(g, launch, view) {
  const p = new URLSearchParams();
  p.set('graph', G[g].id);
  if (view) p.set('group', view);
  if (launch !== null && launch !== undefined) p.set('launch', launch);
  return '#' + p.toString();
}
function writeHash() {
  const want = link(S.g, S.launch, S.view);
  if (location.hash === want) return;
  try { history.replaceState(null, '', want); } catch (e) { location.replace(want); }
}
window.addEventListener('hashchange', () => { readHash(); render(); });

// --- which view shows a launch as its own box -----------------------------------------------------
function viewFor(gr, launch, now) {
  if (!isTree(gr)) return '';
  if (gr.views[now] && gr.views[now][1].includes(launch)) return now;
  const chain = [];
  for (let g = gr.groupOf[launch]; g; g = gr.views[g] ? gr.views[g][2] : '') chain.unshift(g);
  for (const v of ['', ...chain]) if (gr.views[v] && gr.views[v][1].includes(launch)) return v;
  return chain.length ? chain[chain.length - 1] : '';
}
function select(g, launch, view) {
  S.g = g; S.node = null;
  S.launch = launch;
  S.view = view !== undefined ? view : (launch === null ? S.view : viewFor(G[g], launch, S.view));
  render(true);
}

// --- the page -----------------------------------------------------------------------------------
function render(fromClick) {
  nav(); main(); drawing(fromClick); detail(); writeHash();
}

function nav() {
  const box = $('cv-nav'); box.textContent = '';
  const ranks = [...new Set(G.map((g) => g.rank).filter((r) => r !== null))];
  let shown = G.map((g, i) => i);
  if (ranks.length > 1) {
    const sel = h('select', {'aria-label': 'rank', on: {change: (e) => {
      const r = Number(e.target.value); const i = G.findIndex((g) => g.rank === r); if (i >= 0) select(i, null, ''); }}},
      ranks.map((r) => h('option', {value: r, selected: r === graph().rank, text: `rank ${r}`})));
    box.append(h('label', {cls: 'cv-rank'}, 'Rank ', sel));
    shown = shown.filter((i) => G[i].rank === graph().rank);
  }
  box.append(h('span', {cls: 'cv-navlabel', text: 'Graph:'}));
  for (const i of shown) box.append(h('button', {cls: i === S.g ? 'cv-on' : '', 'data-graph': G[i].id,
    text: `${G[i].label} (${G[i].counts})`,
    on: {click: () => select(i, null, '')}}));
}

function main() {
  const key = String(S.g);
  const box = $('cv-graph');
  if (box.dataset.graph === key) return;
  box.dataset.graph = key; box.textContent = ''; S.shown = null; S.zoom = null;
  const gr = graph();
  const legend = h('div', {cls: 'cv-legend'}, gr.legend.map(([c, l]) => h('span', {}, h('i', {style: `background:${c}`}), l)));
  const bar = h('div', {cls: 'cv-zoombar'}, ['−', 'fit', '+', '100%'].map((z) =>
    h('button', {text: z, title: z === 'fit' ? 'Fit the drawing in the pane' : 'Zoom', on: {click: () => zoom(z)}})));
  box.append(h('div', {cls: 'cv-cols'},
    h('div', {cls: 'cv-left'}, h('div', {id: 'cv-crumbs'}), legend, bar, h('div', {id: 'cv-drawing', cls: 'cv-drawing'}),
      h('p', {cls: 'cv-muted', text: isTree(gr)
        ? 'Launches grouped by module, as the Viewer groups a graph of more than 60: click a group to open it, a kernel box to see its code.'
        : 'Click a kernel box or a node to see its code, FX nodes and source lines.'})),
    h('div', {id: 'cv-detail', cls: 'cv-right'})));
  box.append(lazySection('Everything call() runs: launches and extern calls', gr.launches.length, launchTable));
  box.append(lazySection('Fusion groups', gr.groups.length, groupTable));
  if (gr.fusion) box.append(lazySection('Refused fusions by reason', gr.fusion.refused, refusalTables));
  else box.append(h('p', {cls: 'cv-muted', text: 'No fusion log in this run: Inductor\'s fusion decisions are not known.'}));
  $('cv-drawing').addEventListener('click', onDrawingClick);
  $('cv-drawing').addEventListener('wheel', (e) => {
    if (!(e.ctrlKey || e.metaKey)) return;
    e.preventDefault(); setZoom((S.zoom || fitScale()) * Math.exp(-e.deltaY * 0.002));
  }, {passive: false});
}

function lazySection(title, n, build) {
  const d = h('details', {cls: 'cv-section'}, h('summary', {text: `${title} (${n})`}));
  d.addEventListener('toggle', () => { if (d.open && !d.dataset.built) { d.dataset.built = '1'; d.append(build()); } });
  return d;
}

// --- the drawing --------------------------------------------------------------------------------
function drawing(fromClick) {
  const gr = graph(), key = S.g + '|' + S.view, box = $('cv-drawing');
  crumbs(gr);
  if (S.shown !== key) {
    S.shown = key; box.textContent = '';
    const v = gr.views[S.view];
    const t = v ? document.getElementById('cv-d' + v[0]) : null;
    if (!t) {
      box.append(h('p', {cls: 'cv-warn', text: 'No drawing in this file: ' + (D.noDrawing || 'this graph has no FX graph') +
        '. Everything call() runs is listed below.'}));
      return;
    }
    const svg = document.importNode(t.content, true).querySelector('svg');
    box.append(svg);
    annotate(gr, v, svg);
    applyZoom();
    const first = svg.querySelector('[data-launch]');  // a drawing wider than the pane: its first launch in view
    if (first && box.scrollWidth > box.clientWidth) {
      const b = box.getBoundingClientRect(), r = first.getBoundingClientRect();
      box.scrollLeft = Math.max(0, r.left - b.left - box.clientWidth / 2 + r.width / 2);
    }
  }
  mark(gr, fromClick);
}

function annotate(gr, v, svg) {
  const items = v[1];
  for (const e of svg.querySelectorAll('g.node, g.cluster')) {
    const t = target(gr, e.id);
    if (!t) continue;
    e.classList.add('cv-click');
    const launch = t.node !== undefined ? (nodeLaunches(gr)[t.node] || [])[0] : t.launch;
    if (launch !== undefined) e.setAttribute('data-launch', launch);
    if (t.group !== undefined) e.setAttribute('data-group', t.group);
    if (t.node !== undefined) e.setAttribute('data-node', gr.nodes[t.node] ? gr.nodes[t.node][0] : '');
    if (!items.length) continue;  // fx_dot's own drawing carries its tooltips
    const title = document.createElementNS(SVGNS, 'title');
    if (t.launch !== undefined) {
      const la = gr.launches[t.launch];
      title.textContent = `#${t.launch} ${la[0]} (${la[1].replace(/_/g, ' ')}): click for its code`;
    } else {
      const w = gr.views[t.group];
      title.textContent = `${t.group}: ${plural(w ? w[4] : 0, 'launch', 'launches')}; click to open`;
    }
    e.prepend(title);
  }
}

function target(gr, id) {  // what an element of the drawing stands for
  const m = /^cv([uknLC])(\d+)$/.exec(id || '');
  if (!m) return null;
  const k = Number(m[2]);
  if (m[1] === 'u' || m[1] === 'k') {
    const it = (gr.views[S.view] || [0, []])[1][k];
    return it === undefined ? null : (typeof it === 'number' ? {launch: it} : {group: it});
  }
  if (m[1] === 'n') return {node: k};
  return k < gr.launches.length ? {launch: k} : null;
}

function onDrawingClick(e) {
  const el = e.target.closest('g.node, g.cluster');
  if (!el) return;
  const gr = graph(), t = target(gr, el.id);
  if (!t) return;
  if (t.group !== undefined) { S.view = t.group; S.launch = null; S.node = null; render(); return; }
  if (t.launch !== undefined) { S.launch = t.launch; S.node = null; render(); return; }
  const ls = nodeLaunches(gr)[t.node] || [];
  S.launch = ls.length ? ls[0] : null; S.node = t.node; render();
}

function nodeLaunches(gr) {
  if (!gr._nodeLaunches) {
    gr._nodeLaunches = {};
    gr.launches.forEach((la, i) => la[3].forEach((n) => (gr._nodeLaunches[n] = gr._nodeLaunches[n] || []).push(i)));
  }
  return gr._nodeLaunches;
}

function mark(gr, scroll) {
  const svg = $('cv-drawing').querySelector('svg');
  if (!svg) return;
  for (const e of svg.querySelectorAll('.cv-sel, .cv-sel-in')) e.classList.remove('cv-sel', 'cv-sel-in');
  if (S.launch === null) return;
  let found = null;
  for (const e of svg.querySelectorAll('g.node, g.cluster')) {
    const t = target(gr, e.id);
    if (t && t.launch === S.launch) { e.classList.add('cv-sel'); found = found || e; }
    if (S.node !== null && e.id === 'cvn' + S.node) e.classList.add('cv-sel');
  }
  if (found && scroll) found.scrollIntoView({block: 'nearest', inline: 'nearest'});
}

function crumbs(gr) {
  const box = $('cv-crumbs'); box.textContent = '';
  if (!isTree(gr)) return;
  const chain = [];
  for (let g = S.view; g; g = gr.views[g] ? gr.views[g][2] : '') chain.unshift(g);
  box.append(h('button', {text: 'whole graph', cls: S.view === '' ? 'cv-on' : '', on: {click: () => select(S.g, null, '')}}));
  for (const g of chain) box.append(' ▸ ', h('button', {text: gr.views[g][3] || g, cls: g === S.view ? 'cv-on' : '',
    on: {click: () => select(S.g, null, g)}}));
}

function natural(svg) {
  const px = (v) => parseFloat(v) * (/pt$/.test(v || '') ? PT : 1);
  return [px(svg.getAttribute('width')), px(svg.getAttribute('height'))];
}
function fitScale() {
  const box = $('cv-drawing'), svg = box.querySelector('svg');
  if (!svg) return 1;
  const [w, hgt] = natural(svg);
  // the pane's width, but never so small that its 9-point labels cannot be read: a wider drawing scrolls
  return Math.max(Math.min(1, (box.clientWidth - 4) / w), Math.min(1, MIN_FIT));
}
function applyZoom() {
  const svg = $('cv-drawing').querySelector('svg');
  if (!svg) return;
  const s = S.zoom || fitScale(), [w, hgt] = natural(svg);
  svg.style.width = (w * s) + 'px'; svg.style.height = (hgt * s) + 'px';
}
function setZoom(s) { S.zoom = Math.min(4, Math.max(0.05, s)); applyZoom(); }
function zoom(z) {
  if (z === 'fit') { S.zoom = null; applyZoom(); return; }
  if (z === '100%') { setZoom(1); return; }
  setZoom((S.zoom || fitScale()) * (z === '+' ? 1.25 : 0.8));
}
window.addEventListener('resize', () => { if (S.zoom === null) applyZoom(); });

// --- a launch -----------------------------------------------------------------------------------
function chip(kind) {
  const found = graph().legend.find(([, l]) => l === kind.replace(/_/g, ' '));
  return h('span', {cls: 'cv-chip', style: found ? `background:${found[0]}` : null, text: kind.replace(/_/g, ' ')});
}
function launchButton(i) {
  const la = graph().launches[i];
  return h('button', {cls: 'cv-link', 'data-launch': i, text: `#${i} ${la[0]}`, on: {click: () => select(S.g, i)}});
}

function detail() {
  const box = $('cv-detail'), gr = graph();
  box.textContent = '';
  if (S.node !== null && S.launch === null) {
    const n = gr.nodes[S.node];
    box.append(h('h3', {text: n ? n[0] : 'node'}), h('p', {text: (n ? n[1] + ': ' : '') + 'runs in no kernel (a view, an input, or folded into its users\' indexing).'}));
    return;
  }
  if (S.launch === null) {
    box.append(h('div', {cls: 'cv-cards'}, gr.cards.map(([label, value, help]) =>
      h('div', {title: help}, h('div', {cls: 'cv-muted', text: label}), h('div', {cls: 'cv-card-value', text: value})))));
    box.append(h('p', {cls: 'cv-muted', text: 'Click a kernel box in the drawing, or a row below it, to see its code, FX nodes and source lines.'}));
    return;
  }
  const i = S.launch, la = gr.launches[i];
  box.append(h('h3', {id: 'cv-launch-title'}, `#${i} `, h('code', {text: la[0]}), ' ', chip(la[1])));
  box.append(h('div', {cls: 'cv-muted'}, h('a', {href: link(S.g, i, S.view), text: 'link to this launch'}),
    ` · output_code.py line ${la[8]}`));
  box.append(h('div', {cls: la[7] ? 'cv-basis cv-inferred' : 'cv-basis', text: (la[7] ? '⚠ ' : '') + gr.bases[la[6]]}));
  if (la[2] >= 0) {
    const k = gr.kernels[la[2]];
    box.append(h('table', {cls: 'cv-meta'}, k[4].map(([a, b]) => h('tr', {}, h('th', {text: a}), h('td', {}, h('code', {text: b}))))));
    const src = code(k[3], k[1], k[2]);
    box.append(src);
    scrollCode(src);
  } else {
    box.append(h('p', {text: 'An extern call: Inductor generated no code for it, it calls a library.'}));
  }
  const others = gr.launches.map((x, j) => j).filter((j) => j !== i && gr.launches[j][0] === la[0]);
  if (others.length) box.append(h('div', {cls: 'cv-block'}, h('b', {text: `Other launches of this kernel (${others.length}): `}),
    others.slice(0, 60).map(launchButton)));
  box.append(sourceLines(gr, la), fxNodes(gr, la), fusionGroup(gr, la), refusedWith(gr, i));
}

const SRC = {
  python: /(#[^\n]*)|("{3}[\s\S]*?"{3}|'{3}[\s\S]*?'{3}|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(@[\w.]+)|\b(def|return|if|elif|else|for|while|in|not|and|or|is|None|True|False|import|from|as|with|pass|break|continue|lambda|class|yield|assert|del|try|except|finally|raise)\b|\b(\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?)\b/g,
  cpp: /(\/\/[^\n]*|\/\*[\s\S]*?\*\/)|("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*')|(^[ \t]*#[^\n]*)|\b(auto|bool|break|case|char|const|constexpr|continue|double|else|extern|float|for|if|inline|int|long|return|signed|static|struct|template|typename|unsigned|void|while|namespace|using)\b|\b(\d[\d_]*(?:\.\d*)?(?:[eE][+-]?\d+)?[fFuUlL]*)\b/gm,
};
const TOKEN = ['cv-c', 'cv-s', 'cv-d', 'cv-k', 'cv-n'];  // comment, string, decorator or preprocessor, keyword, number
function highlighted(src, lang) {
  const re = SRC[lang] || SRC.python, frag = document.createDocumentFragment();
  re.lastIndex = 0;
  let at = 0, m;
  while ((m = re.exec(src)) !== null) {
    if (!m[0]) { re.lastIndex++; continue; }
    if (m.index > at) frag.append(src.slice(at, m.index));
    let g = 1;
    while (m[g] === undefined) g++;
    frag.append(h('span', {cls: TOKEN[g - 1], text: m[0]}));
    at = m.index + m[0].length;
  }
  frag.append(src.slice(at));
  return frag;
}
function code(src, lang, first) {
  const n = src.split('\n').length;
  const numbers = Array.from({length: n}, (_, k) => first + k).join('\n');
  const box = h('div', {cls: 'cv-code'}, h('pre', {cls: 'cv-gutter', text: numbers}), h('pre', {cls: 'cv-src'}, highlighted(src, lang)));
  box.dataset.start = src.split('\n').findIndex((l) => /^(@triton|def |extern "C"|void )/.test(l));  // past the imports
  return box;
}
function scrollCode(box) {  // once in the page: to the kernel's decorator, its imports above
  const start = Number(box.dataset.start), n = box.querySelector('.cv-gutter').textContent.split('\n').length;
  if (start > 0) box.scrollTop = (start - 1) * (box.scrollHeight / n);
}

function sourceLines(gr, la) {
  if (!gr._snip) { gr._snip = {}; for (const [f, l, c] of gr.snippets) gr._snip[f + ':' + l] = c; }
  const items = la[4].map(([f, l]) => h('li', {}, h('code', {text: `${D.files[f]}:${l}`}),
    gr._snip[f + ':' + l] !== undefined ? h('pre', {cls: 'cv-line', text: gr._snip[f + ':' + l]}) : null));
  return h('details', {cls: 'cv-block', open: true}, h('summary', {text: `Source lines (${la[4].length})`}),
    items.length ? h('ul', {}, items) : h('p', {cls: 'cv-muted', text: 'No source line is linked to this launch.'}));
}
function fxNodes(gr, la) {
  const items = la[3].slice(0, 300).map((k) => h('li', {}, h('code', {text: gr.nodes[k][0]}), ' ', h('span', {cls: 'cv-muted', text: gr.nodes[k][1]})));
  return h('details', {cls: 'cv-block', open: la[3].length <= 40},
    h('summary', {text: `FX nodes, ${gr.fx === 'post_grad_graph' ? 'post-grad' : 'AOT'} graph (${la[3].length})`}), h('ul', {cls: 'cv-cols2'}, items));
}
function fusionGroup(gr, la) {
  const g = gr.groups.find((x) => x[0] === la[5]);
  if (!g) return null;
  return h('div', {cls: 'cv-block'}, h('b', {text: 'Fusion group '}), h('code', {text: g[0]}),
    ` · ${g[1]} · ${plural(g[2], 'scheduler node')}, writes ${g[4]}, fused away ${g[6]}`,
    g[5].length ? h('div', {cls: 'cv-muted', text: 'never in memory: ' + g[5].join(', ') + (g[6] > g[5].length ? ' …' : '')}) : null);
}
function refusedWith(gr, i) {
  if (!gr.fusion) return null;
  const pairs = gr.fusion.pairs.filter((p) => (p[5] === i || p[6] === i) && p[5] !== p[6]);
  if (!pairs.length) return h('p', {cls: 'cv-muted', text: 'Inductor refused no fusion between this launch and another.'});
  return h('details', {cls: 'cv-block', open: pairs.length <= 12}, h('summary', {text: `Refused fusions with other launches (${pairs.length})`}),
    h('ul', {}, pairs.slice(0, 200).map((p) => {
      const other = p[5] === i ? p[6] : p[5];
      return h('li', {}, `round ${p[0]}: `, h('code', {text: p[1]}), ' with ', h('code', {text: p[2]}), ' (',
        other >= 0 ? launchButton(other) : 'no launch', `): ${p[3]} `, h('span', {cls: 'cv-muted', text: `(${p[4]})`}));
    })));
}

// --- the tables under the drawing ---------------------------------------------------------------
function launchTable() {
  const gr = graph();
  if (!gr._snip) sourceLines(gr, [0, 0, 0, [], []]);
  return h('table', {cls: 'cv-table'}, h('tr', {}, ['#', 'kernel', 'kind', 'FX nodes', 'first source line'].map((t) => h('th', {text: t}))),
    gr.launches.map((la, i) => h('tr', {}, h('td', {}, launchButton(i)), h('td', {}, h('code', {text: la[0]})), h('td', {}, chip(la[1])),
      h('td', {text: la[3].length}), h('td', {text: la[4].length ? `${D.files[la[4][0][0]]}:${la[4][0][1]}` : ''}))));
}
function groupTable() {
  const gr = graph();
  return h('div', {}, gr.groups.length > 400 ? h('p', {cls: 'cv-muted', text: `The first 400 of ${gr.groups.length} groups.`}) : null,
    h('table', {cls: 'cv-table'}, h('tr', {}, ['group', 'kind', 'members', 'writes', 'fused away', 'launches'].map((t) => h('th', {text: t}))),
      gr.groups.slice(0, 400).map((g) => h('tr', {}, h('td', {}, h('code', {text: g[0]})), h('td', {text: g[1]}), h('td', {text: g[2]}),
        h('td', {text: g[3].join(', ') + (g[4] > g[3].length ? ` … (${g[4]})` : '')}),
        h('td', {text: g[5].join(', ') + (g[6] > g[5].length ? ` … (${g[6]})` : '')}), h('td', {}, g[7].map(launchButton))))));
}
function refusalTables() {
  const gr = graph(), f = gr.fusion, by = {};
  for (const p of f.pairs) (by[p[4]] = by[p[4]] || []).push(p);
  const box = h('div', {}, h('p', {cls: 'cv-muted', text: `${f.rounds} rounds, ${f.fused} pairs fused, ${f.refused} refused ` +
    `(${f.distinct} distinct), from the run's fusion log.`}));
  for (const [kind, ps] of Object.entries(by).sort((a, b) => b[1].length - a[1].length)) {
    const note = document.querySelector(`#cv-notes [data-kind="${CSS.escape(kind)}"]`);
    box.append(h('details', {cls: 'cv-block'}, h('summary', {text: `${kind.replace(/_/g, ' ')} (${ps.length})`}),
      note ? note.cloneNode(true) : null,
      h('table', {cls: 'cv-table'}, h('tr', {}, ['round', 'first', 'second', 'launches', 'reason'].map((t) => h('th', {text: t}))),
        ps.slice(0, 150).map((p) => h('tr', {}, h('td', {text: p[0]}), h('td', {}, h('code', {text: p[1]})), h('td', {}, h('code', {text: p[2]})),
          h('td', {}, p[5] >= 0 ? launchButton(p[5]) : '', ' ', p[6] >= 0 ? launchButton(p[6]) : ''), h('td', {text: p[3]})))),
      ps.length > 150 ? h('p', {cls: 'cv-muted', text: `… and ${ps.length - 150} more: select a launch for its own.`}) : null));
  }
  return box;
}

function profile() {
  const P = D.profile, box = $('cv-profile');
  if (!P) return;
  box.append(h('h2', {text: 'Where the time went (the run\'s profile)'}), h('p', {text: P.line}));
  box.append(h('table', {cls: 'cv-table'}, h('tr', {}, ['ms', 'share', 'calls', 'graph', 'launch', 'module'].map((t) => h('th', {text: t}))),
    P.rows.map(([gid, launch, kernel, kind, us, calls, share, module]) => {
      const g = G.findIndex((x) => x.id === gid);
      return h('tr', {}, h('td', {text: (us / 1000).toFixed(3)}), h('td', {text: (share * 100).toFixed(1) + '%'}), h('td', {text: calls}),
        h('td', {text: g >= 0 ? G[g].label : gid}),
        h('td', {}, g >= 0 ? h('button', {cls: 'cv-link', text: `#${launch} ${kernel}`, on: {click: () => { select(g, launch); $('cv-graph').scrollIntoView(); }}}) : `#${launch} ${kernel}`),
        h('td', {text: module}));
    })));
}

readHash();
render(S.launch !== null);
profile();
})();
"""

CSS = """
body{font:14px/1.45 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 18px 40px;color:#222}
h1{font-size:22px;margin:14px 0 4px}h2{font-size:17px}h3{font-size:15px;margin:4px 0;word-break:break-all}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
header{border-bottom:1px solid #ddd;padding-bottom:8px}header details{margin:4px 0}header ul,header ol{margin:4px 0}
.cv-facts{color:#444}.cv-facts b{color:#666;font-weight:600}.cv-muted{color:#777;font-size:12px}
.cv-good{color:#2a9d8f;font-weight:600}.cv-warnword{color:#e76f51;font-weight:600}.cv-bad{color:#b3261e;font-weight:600}
.cv-warn{background:#fff4ce;border:1px solid #e0b400;border-radius:4px;padding:4px 8px}
#cv-nav{margin:10px 0;display:flex;flex-wrap:wrap;gap:4px;align-items:center}.cv-navlabel{color:#666;margin-right:4px}
button{font:inherit;font-size:12px;border:1px solid #ccc;background:#fff;border-radius:4px;padding:1px 7px;cursor:pointer}
button:hover{border-color:#888}button.cv-on{background:#1c64d6;border-color:#1c64d6;color:#fff}
button.cv-link{border:none;padding:0 3px;color:#1c64d6;font-family:ui-monospace,Menlo,Consolas,monospace;text-align:left}
.cv-cols{display:flex;gap:14px;align-items:flex-start}.cv-left{flex:3;min-width:0}.cv-right{flex:2;min-width:0;max-height:88vh;overflow:auto}
.cv-drawing{overflow:auto;max-height:700px;border:1px solid #ddd;border-radius:4px;background:#fff}
.cv-drawing svg{display:block}.cv-drawing text{font-family:Helvetica,Arial,sans-serif}
.cv-click{cursor:pointer}.cv-click:hover polygon,.cv-click:hover path{stroke-width:2}
.cv-sel polygon,.cv-sel path,.cv-sel ellipse{stroke:#d62828;stroke-width:3}
.cv-legend{font-size:12px;margin:4px 0}.cv-legend span{margin-right:10px;white-space:nowrap}
.cv-legend i{display:inline-block;width:11px;height:11px;border:1px solid #666;margin-right:4px;vertical-align:middle}
.cv-zoombar{display:flex;gap:4px;justify-content:flex-end;margin-bottom:2px}#cv-crumbs{margin:4px 0}
.cv-chip{border:1px solid #999;border-radius:3px;padding:0 4px;font-size:12px;white-space:nowrap;font-weight:normal}
.cv-basis{font-size:12px;color:#555;margin:4px 0}.cv-inferred{background:#fff4ce;border:1px solid #e0b400;border-radius:4px;padding:2px 6px}
.cv-meta{border-collapse:collapse;font-size:12px;margin:4px 0}.cv-meta th{text-align:left;padding-right:8px;color:#555;vertical-align:top}
.cv-code{display:flex;overflow:auto;max-height:520px;border:1px solid #ddd;border-radius:4px;background:#fafafa}
.cv-code pre{margin:0;padding:4px 6px;line-height:1.4}.cv-gutter{color:#999;text-align:right;user-select:none;border-right:1px solid #eee}
.cv-c{color:#408080;font-style:italic}.cv-s{color:#ba2121}.cv-d{color:#aa22ff}.cv-k{color:#008000;font-weight:bold}.cv-n{color:#666}
.cv-block{margin:8px 0}.cv-block ul{margin:2px 0;padding-left:18px}.cv-line{margin:0 0 2px;white-space:pre-wrap;color:#333}
.cv-cols2{columns:2}.cv-section{margin:10px 0}.cv-section>summary{font-weight:600;cursor:pointer}
.cv-table{border-collapse:collapse;font-size:12px;margin:4px 0}.cv-table th,.cv-table td{border-bottom:1px solid #eee;padding:2px 6px;text-align:left;vertical-align:top}
.cv-divs li{margin-bottom:4px}.cv-block button.cv-link{margin:0 6px 2px 0}
.cv-cards{display:flex;flex-wrap:wrap;gap:6px 24px;margin:4px 0 8px}.cv-card-value{font-size:22px}
"""
