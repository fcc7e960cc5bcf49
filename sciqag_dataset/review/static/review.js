// The review page: shows one pair at a time and saves every action at once (POST /api/review).
// All text from the data is set with textContent, never as HTML.
"use strict";

const DIMENSIONS = [
  ["relevance", "Relevance", "asks about what the paper is about"],
  ["agnosticism", "Agnosticism", "answerable without seeing the paper (no 'Figure 3', 'this study')"],
  ["completeness", "Completeness", "the answer covers what the question asks"],
  ["accuracy", "Accuracy", "the answer agrees with the paper"],
  ["reasonableness", "Reasonableness", "coherent, no contradictions"],
  ["difficulty", "Difficulty", "closed-book, for a graduate student: 1 easy, 2 medium, 3 hard"],
];

const params = new URLSearchParams(location.search);
const token = params.get("token") || "";
let reviewer = params.get("reviewer") || "";
let index = parseInt((location.hash.match(/i=(\d+)/) || [])[1] || "0", 10);
let pair = null;          // what /api/pair returned for the pair shown
let active = 0;           // the highlighted dimension row
let pending = {};         // text fields typed but not yet sent
let textTimer = null;
let markAt = -1;

const $ = (id) => document.getElementById(id);

async function api(path, options = {}) {
  const res = await fetch(path, {
    keepalive: true,  // a save sent as the page unloads still arrives
    ...options,
    headers: { "X-Review-Token": token, "Content-Type": "application/json" },
  });
  const body = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

function showSaved(text, error = false) {
  const el = $("saved");
  el.textContent = text;
  el.classList.toggle("error", error);
}

function buildScoreRows() {
  const table = $("scores");
  for (const [i, [key, name, hint]] of DIMENSIONS.entries()) {
    const tr = table.insertRow();
    tr.dataset.key = key;
    tr.addEventListener("click", () => setActive(i));
    const dim = tr.insertCell();
    dim.className = "dim";
    const b = document.createElement("b");
    b.textContent = name;
    const s = document.createElement("span");
    s.textContent = hint;
    dim.append(b, s);
    const cell = tr.insertCell();
    cell.className = "buttons";
    for (const v of [1, 2, 3]) {
      const btn = document.createElement("button");
      btn.textContent = v;
      btn.dataset.value = v;
      btn.title = `${name}: ${v}`;
      btn.addEventListener("click", (ev) => { ev.stopPropagation(); setActive(i); score(key, v); });
      cell.append(btn);
    }
    tr.insertCell().className = "judge";
  }
}

function setActive(i) {
  active = Math.max(0, Math.min(DIMENSIONS.length - 1, i));
  for (const [j, tr] of [...$("scores").rows].entries()) tr.classList.toggle("active", j === active);
}

async function save(changes) {
  if (!pair) return;
  const id = pair.pair_id;
  Object.assign(pair.state, changes);
  for (const [k, v] of Object.entries(changes)) if (v === null) delete pair.state[k];
  render(false);
  showSaved("Saving…");
  try {
    const out = await api("api/review", {
      method: "POST",
      body: JSON.stringify({ reviewer, pair_id: id, changes }),
    });
    if (pair && pair.pair_id === id) { pair.state = out.state; pair.done = out.done; render(false); }
    showSaved("Saved ✓");
  } catch (e) {
    showSaved("Not saved: " + e.message, true);
  }
}

function score(key, v) {
  const same = pair.state[key] === v;
  save({ [key]: same ? null : v });   // pressing the chosen score again clears it
}

function decide(keep) {
  save({ keep: pair.state.keep === keep ? null : keep });
}

function flushText() {
  clearTimeout(textTimer);
  const changes = pending;
  pending = {};
  if (Object.keys(changes).length) return save(changes);
}

function queueText(key, value) {
  pending[key] = value;
  clearTimeout(textTimer);
  textTimer = setTimeout(flushText, 700);
}

function render(full = true) {
  const p = pair;
  $("progress-text").textContent = `${p.done} of ${p.total} reviewed`;
  $("bar-fill").style.width = p.total ? `${(100 * p.done) / p.total}%` : "0";
  $("position").textContent = `${p.index + 1} / ${p.total}`;
  for (const tr of $("scores").rows) {
    const key = tr.dataset.key;
    const judge = p.judge && p.judge[key];
    for (const btn of tr.cells[1].children) {
      const v = Number(btn.dataset.value);
      btn.classList.toggle("on", p.state[key] === v);
      btn.classList.toggle("suggested", !!judge && Math.round(judge.score) === v);
    }
    const j = tr.cells[2];
    j.textContent = judge && judge.score !== null ? `judge: ${judge.score}` : "";
    j.title = (judge && judge.reason) || "";
  }
  const kind = $("reasoning-type");
  if (kind.options.length <= 1) {
    for (const t of p.reasoning_types) kind.add(new Option(t, t));
  }
  kind.value = p.state.reasoning_type || "";
  const judgeKind = p.judge && p.judge.reasoning_type && p.judge.reasoning_type.score;
  $("judge-type").textContent = judgeKind ? `judge: ${judgeKind}` : "";
  $("keep").classList.toggle("on", p.state.keep === true);
  $("drop").classList.toggle("on", p.state.keep === false);
  for (const key of ["question", "answer"]) {
    const edited = key in p.state && p.state[key] !== p[key];
    $(key + "-edited").hidden = !edited;
    $(key + "-original").hidden = !edited;
    $(key + "-original").textContent = edited ? "Generated: " + p[key] : "";
    if (document.activeElement !== $(key + "-box")) $(key).textContent = key in p.state ? p.state[key] : p[key];
  }
  if (!full) return;
  $("title").textContent = p.title;
  $("pair-id").textContent = p.pair_id;
  for (const key of ["question", "answer"]) { $(key + "-box").hidden = true; $(key).hidden = false; }
  $("comment").value = p.state.comment || "";
  renderComponent(p.component);
  const box = $("passage");
  box.replaceChildren();
  let marks = 0;
  for (const seg of p.passage) {
    let node = document.createTextNode(seg.text);
    if (seg.mention) {  // where the text refers to the component the pair was asked from
      const span = document.createElement("span");
      span.className = "mention";
      span.title = "refers to " + ((p.component && p.component.label) || "the component");
      span.append(node);
      node = span;
    }
    if (seg.mark && box.lastChild && box.lastChild.nodeName === "MARK") {
      box.lastChild.append(node);  // one evidence passage, cut by a mention inside it
      continue;
    }
    if (seg.mark) {
      const m = document.createElement("mark");
      m.append(node);
      node = m;
      marks++;
    }
    box.append(node);
  }
  $("evidence-count").textContent = p.text_missing
    ? "· the paper's text is not in this dataset: the answer's evidence sentences"
    : marks ? `· ${marks} evidence passage${marks > 1 ? "s" : ""} highlighted` : "· no evidence found in the text";
  markAt = -1;
  box.scrollTop = 0;
  nextMark();
}

// The table, equation or figure a pair was asked from: a table as a grid of its cells (header rows as
// headings), an equation as its source text, a figure by its caption (the image is not in the data).
function renderComponent(c) {
  $("component").hidden = !c;
  if (!c) return;
  $("component-label").textContent = c.label || c.kind;
  $("component-caption").textContent = c.missing
    ? `the paper record has no ${c.kind} ${c.id || ""} any more`
    : c.caption || "";
  const body = $("component-body");
  body.replaceChildren();
  if (c.missing) return;
  if (c.kind === "table" && c.cells && c.cells.length) {
    const table = document.createElement("table");
    for (const [r, row] of c.cells.entries()) {
      const tr = table.insertRow();
      for (const cell of row) {
        const td = document.createElement(r < (c.header_rows || 0) ? "th" : "td");
        td.textContent = cell;
        tr.append(td);
      }
    }
    body.append(table);
  } else if (c.kind !== "figure" && c.content) {
    const pre = document.createElement("pre");
    pre.textContent = c.content;
    pre.title = c.content_format ? `as ${c.content_format}` : "";
    body.append(pre);
  } else if (c.kind === "figure") {
    const note = document.createElement("span");
    note.className = "muted";
    note.textContent = "the figure itself is not in the data: its caption and the text that mentions it are";
    body.append(note);
  }
}

function nextMark() {
  const marks = [...$("passage").querySelectorAll("mark")];
  if (!marks.length) return;
  marks.forEach((m) => m.classList.remove("current"));
  markAt = (markAt + 1) % marks.length;
  marks[markAt].classList.add("current");
  const box = $("passage");
  box.scrollTop = marks[markAt].offsetTop - box.offsetTop - 80;
}

async function load(i) {
  await flushText();
  const p = await api(`api/pair?reviewer=${encodeURIComponent(reviewer)}&i=${i}`);
  if (!p.total) { $("main").hidden = true; $("empty").hidden = false; return; }
  pair = p;
  index = p.index;
  $("filter-score").parentElement.hidden = p.blind;  // a blind review hides every trace of the judge
  $("asked-from").hidden = !(p.asked_from || []).some((k) => k !== "prose");
  history.replaceState(null, "", `${location.pathname}${location.search}#i=${index}`);
  setActive(0);
  render(true);
}

async function step(dir) {
  const q = new URLSearchParams({
    reviewer, from: String(index + dir), step: String(dir),
    status: $("filter-status").value, score: $("filter-score").value, asked_from: $("filter-asked").value,
  });
  const { i } = await api(`api/find?${q}`);
  if (i === null) { showSaved(dir > 0 ? "No more pairs this way" : "No earlier pair this way"); return; }
  await load(i);
}

function editText(key) {
  const box = $(key + "-box");
  box.value = key in pair.state ? pair.state[key] : pair[key];
  $(key).hidden = true;
  box.hidden = false;
  box.focus();
}

function leaveText(key) {
  const box = $(key + "-box");
  if (box.hidden) return;
  box.hidden = true;
  $(key).hidden = false;
  $(key).textContent = box.value.trim() ? box.value : pair[key];
}

function wireText() {
  for (const key of ["question", "answer"]) {
    const box = $(key + "-box");
    // an emptied box goes back to the generated text
    box.addEventListener("input", () => queueText(key, box.value.trim() === "" ? null : box.value));
    box.addEventListener("blur", () => { flushText(); leaveText(key); });
    $("edit-" + key).addEventListener("click", () => editText(key));
    $(key).addEventListener("dblclick", () => editText(key));
  }
  const c = $("comment");
  c.addEventListener("input", () => queueText("comment", c.value === "" ? null : c.value));
  c.addEventListener("blur", flushText);
}

function onKey(ev) {
  const t = ev.target;
  if (t.tagName === "TEXTAREA" || t.tagName === "INPUT" || t.tagName === "SELECT") {
    const leave = t.tagName === "SELECT"
      ? ev.key === "Escape" || ev.key === "Enter"
      : t.tagName === "TEXTAREA" && (ev.key === "Escape" || (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)));
    if (leave) {
      ev.preventDefault();
      t.blur();
    }
    return;
  }
  if (!pair || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  const keys = {
    "1": () => { save({ [DIMENSIONS[active][0]]: 1 }); setActive(active + 1); },
    "2": () => { save({ [DIMENSIONS[active][0]]: 2 }); setActive(active + 1); },
    "3": () => { save({ [DIMENSIONS[active][0]]: 3 }); setActive(active + 1); },
    ArrowUp: () => setActive(active - 1),
    ArrowDown: () => setActive(active + 1),
    y: () => decide(true),
    x: () => decide(false),
    ArrowRight: () => step(1), n: () => step(1),
    ArrowLeft: () => step(-1), p: () => step(-1),
    q: () => editText("question"),
    a: () => editText("answer"),
    c: () => $("comment").focus(),
    t: () => $("reasoning-type").focus(),
    h: nextMark,
  };
  const f = keys[ev.key];
  if (f) { ev.preventDefault(); f(); }
}

function start() {
  $("who").textContent = "Reviewer: " + reviewer;
  $("main").hidden = false;
  buildScoreRows();
  wireText();
  $("prev").addEventListener("click", () => step(-1));
  $("next").addEventListener("click", () => step(1));
  $("keep").addEventListener("click", () => decide(true));
  $("drop").addEventListener("click", () => decide(false));
  $("next-mark").addEventListener("click", nextMark);
  // saved on every change (arrow keys and type-ahead change it too); Enter or Esc leaves the menu
  $("reasoning-type").addEventListener("change", () => save({ reasoning_type: $("reasoning-type").value || null }));
  for (const id of ["filter-status", "filter-score", "filter-asked"]) {
    $(id).addEventListener("change", async () => { $(id).blur(); index = -1; await step(1); });
  }
  document.addEventListener("keydown", onKey);
  window.addEventListener("beforeunload", flushText);
  load(index).catch((e) => showSaved(e.message, true));
}

if (reviewer) {
  start();
} else {
  $("login").hidden = false;
  $("login").addEventListener("submit", (ev) => {
    ev.preventDefault();
    reviewer = $("login-name").value.trim();
    params.set("reviewer", reviewer);
    history.replaceState(null, "", `${location.pathname}?${params}`);
    start();
    $("login").hidden = true;
  });
}
