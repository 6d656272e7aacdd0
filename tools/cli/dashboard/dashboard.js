// The dashboard's page: polls the dashboard's JSON endpoints and draws the
// job's nodes and ranks, each rank's loss and throughput, its logs, and
// offers to stop the job. Every request carries the run's token.
'use strict';

const token = new URLSearchParams(location.search).get('token') || '';
const SVG = 'http://www.w3.org/2000/svg';
const COLORS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2',
                '#7f7f7f', '#bcbd22', '#17becf'];

async function api(path, options = {}) {
  options.headers = Object.assign({'X-Fleetplan-Token': token}, options.headers || {});
  const response = await fetch(path, options);
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return response.json();
}

function showError(error) {
  document.getElementById('error').textContent = error ? String(error.message || error) : '';
}

// Calls `step` now and again `ms` after each call ends.
function every(ms, step) {
  const run = async () => {
    try {
      await step();
    } catch (error) {
      showError(error);
    }
    setTimeout(run, ms);
  };
  run();
}

function cell(row, text, className) {
  const td = row.insertCell();
  td.textContent = text;
  if (className) td.className = className;
  return td;
}

function unknown(value) { return value === null || value === undefined; }

function bytes(value) {
  if (unknown(value)) return '?';
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (value >= 1024 && i < units.length - 1) { value /= 1024; i++; }
  return (i === 0 ? value : value.toFixed(1)) + ' ' + units[i];
}

function percent(value) { return unknown(value) ? '?' : value.toFixed(1) + ' %'; }

function age(seconds) {
  if (unknown(seconds)) return '-';
  const s = Math.round(seconds);
  return s < 60 ? `${s}s` : `${Math.floor(s / 60)}m ${s % 60}s`;
}

function gpuText(gpus) {
  if (gpus === null) return 'unknown';
  if (gpus.length === 0) return 'none';
  return gpus.map(g => `${g.index}: ${percent(g.util_percent)} ${bytes(g.memory_used_bytes)}` +
                       `/${bytes(g.memory_total_bytes)}`).join(', ');
}

// ---- nodes and ranks (/api/top) ----
const known = {nodes: [], ranks: []};

function renderTop(top) {
  const report = top.report;
  document.getElementById('job').textContent =
      `job: ${report.state}` + (report.run_id ? ` (run ${report.run_id}, generation ` +
                                `${report.generation})` : '');
  const nodes = document.querySelector('#nodes tbody');
  const ranks = document.querySelector('#ranks tbody');
  nodes.replaceChildren();
  ranks.replaceChildren();
  const stragglers = new Map(top.stragglers.map(s => [`${s.node}/${s.rank}`, s.why]));
  for (const node of report.nodes) {
    const row = nodes.insertRow();
    cell(row, node.name, 'node');
    cell(row, percent(node.cpu_percent));
    cell(row, bytes(node.memory_bytes));
    cell(row, top.unread[node.name] ? `not read: ${top.unread[node.name]}` : gpuText(node.gpus),
         node.gpus === null ? 'unknown' : '');
    for (const rank of node.ranks) {
      const r = ranks.insertRow();
      const why = stragglers.get(`${node.name}/${rank.rank}`);
      if (why) r.className = 'straggler';
      cell(r, node.name, 'node');
      [rank.rank, rank.local_rank, rank.pid, rank.state, percent(rank.cpu_percent),
       bytes(rank.rss_bytes), age(rank.last_output_age_s), unknown(rank.step) ? '-' : rank.step,
       unknown(rank.steps_per_s) ? '-' : rank.steps_per_s.toFixed(2), why ? `straggler: ${why}` : '']
          .forEach(value => cell(r, String(value)));
    }
  }
  updateChoices(report);
}

function updateChoices(report) {
  const nodes = report.nodes.map(n => n.name);
  const ranks = report.nodes.flatMap(n => n.ranks.map(r => r.rank)).sort((a, b) => a - b);
  fillSelect('log-node', nodes, known.nodes);
  fillSelect('log-rank', ranks, known.ranks);
  known.nodes = nodes;
  known.ranks = ranks;
}

function fillSelect(id, values, before) {
  if (JSON.stringify(values) === JSON.stringify(before)) return;
  const select = document.getElementById(id);
  const chosen = select.value;
  while (select.options.length > 1) select.remove(1);
  for (const value of values) select.add(new Option(String(value), String(value)));
  select.value = chosen;
}

// ---- curves (/api/metrics) ----
const metrics = {runId: null, next: 0, series: new Map(), restarts: []};

function addPoints(body) {
  if (body.run_id !== metrics.runId) {
    metrics.runId = body.run_id;
    metrics.series = new Map();
    metrics.restarts = [];
  }
  metrics.next = body.next;
  for (const point of body.points) {
    const key = `${point.node}/${point.rank}`;
    if (!metrics.series.has(key)) metrics.series.set(key, []);
    metrics.series.get(key).push(point);
  }
  metrics.restarts.push(...body.restarts);
}

function svg(tag, attributes) {
  const element = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  return element;
}

// One polyline per rank; x is the rank's n-th point over every generation,
// a dashed line where a new generation (a restart) begins.
function drawChart(id, field) {
  const chart = document.getElementById(id);
  chart.replaceChildren();
  const width = 800, height = 240, pad = 20;
  const all = [...metrics.series.values()].flat().map(p => p[field]).filter(v => !unknown(v));
  if (all.length === 0) return;
  const low = Math.min(...all), high = Math.max(...all);
  const longest = Math.max(...[...metrics.series.values()].map(s => s.length));
  const x = i => pad + (width - 2 * pad) * (longest > 1 ? i / (longest - 1) : 0.5);
  const y = v => height - pad - (height - 2 * pad) * (high > low ? (v - low) / (high - low) : 0.5);
  chart.append(svg('text', {x: 2, y: 12}), svg('text', {x: 2, y: height - 4}));
  chart.children[0].textContent = high.toPrecision(4);
  chart.children[1].textContent = low.toPrecision(4);
  let color = 0;
  for (const [key, points] of metrics.series) {
    const stroke = COLORS[color++ % COLORS.length];
    const coordinates = [];
    points.forEach((point, i) => {
      if (i > 0 && point.generation !== points[i - 1].generation) {
        chart.append(svg('line', {class: 'restart', x1: x(i), x2: x(i), y1: 0, y2: height,
                                  'data-rank': key, 'data-generation': point.generation}));
      }
      if (!unknown(point[field])) coordinates.push(`${x(i).toFixed(1)},${y(point[field]).toFixed(1)}`);
    });
    chart.append(svg('polyline', {points: coordinates.join(' '), stroke: stroke, 'data-rank': key}));
  }
}

function drawLegend() {
  const legend = document.getElementById('legend');
  legend.replaceChildren();
  let color = 0;
  for (const [key, points] of metrics.series) {
    const span = document.createElement('span');
    const last = points[points.length - 1];
    span.textContent = `■ ${key}: step ${unknown(last.step) ? '-' : last.step}, ` +
                       `generation ${last.generation}`;
    span.className = `series-${color}`;
    span.setAttribute('data-color', COLORS[color++ % COLORS.length]);
    legend.append(span);
  }
  const list = document.getElementById('restarts');
  list.replaceChildren(...metrics.restarts.map(r => {
    const item = document.createElement('li');
    item.textContent = `[${r.node}/${r.rank}] ${r.line}`;
    return item;
  }));
}

async function pollMetrics() {
  const since = metrics.runId === null ? 0 : metrics.next;
  addPoints(await api(`api/metrics?since=${since}`));
  drawChart('loss-chart', 'loss');
  drawChart('throughput-chart', 'samples_per_sec');
  drawLegend();
}

// ---- logs (/api/logs) ----
const logs = {next: 0, filter: ''};
const kMaxLogLines = 2000;

async function pollLogs() {
  const node = document.getElementById('log-node').value;
  const rank = document.getElementById('log-rank').value;
  const filter = `node=${encodeURIComponent(node)}&rank=${encodeURIComponent(rank)}`;
  const view = document.getElementById('logs');
  if (filter !== logs.filter) {
    logs.filter = filter;
    logs.next = 0;
    view.textContent = '';
  }
  const body = await api(`api/logs?${filter}&since=${logs.next}`);
  if (filter !== logs.filter) return;  // changed while asking
  logs.next = body.next;
  if (body.lines.length === 0) return;
  const atEnd = view.scrollTop + view.clientHeight >= view.scrollHeight - 4;
  const text = body.lines.map(l => (l.rank === null ? `[${l.node}] ` : `[${l.node}/${l.rank}] `) +
                                   l.line).join('\n') + '\n';
  view.textContent = (view.textContent + text).split('\n').slice(-kMaxLogLines - 1).join('\n');
  if (atEnd) view.scrollTop = view.scrollHeight;
}

// ---- stop, behind a confirmation ----
function setUpStop() {
  const dialog = document.getElementById('confirm');
  const result = document.getElementById('stop-result');
  document.getElementById('stop').addEventListener('click', () => { dialog.hidden = false; });
  document.getElementById('cancel-stop').addEventListener('click', () => { dialog.hidden = true; });
  document.getElementById('confirm-stop').addEventListener('click', async () => {
    dialog.hidden = true;
    result.textContent = 'stopping…';
    try {
      const body = await api('api/stop', {method: 'POST'});
      result.textContent = body.stopped ? 'stopped: no process of the job is left'
                                        : `not stopped: ${body.error}`;
      result.className = body.stopped ? 'stopped' : 'error';
    } catch (error) {
      result.textContent = `not stopped: ${error.message}`;
      result.className = 'error';
    }
  });
}

setUpStop();
every(2000, async () => renderTop(await api('api/top')));
every(2000, pollMetrics);
every(1000, pollLogs);
