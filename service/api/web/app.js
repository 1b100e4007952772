// The search page: POST /search, a streamed POST /ask, and the sources view (GET
// /documents, uploads through POST /documents and their job's progress). Every text from
// the index or the model is put in the page with textContent: Markdown is rendered by
// building elements, never by parsing HTML, so indexed `<script>` stays text.
"use strict";

const STORAGE = { read: "synopsis-read-key", write: "synopsis-write-key" };
const KIND_LABELS = {
  generated: "generated",
  extractive: "extractive: quoted from passage [1]",
  refusal: "no answer",
};
const JOB_ENDS = new Set(["done", "failed", "cancelled", "interrupted"]);
const KEYWORDS = new Set(
  ("and as assert async await break class const continue def del elif else except export " +
    "false finally for from function if import in is lambda let nonlocal none not null or " +
    "pass raise return self static this true try var while with yield").split(" "),
);
// Strings, comments, numbers and words of a code block, for highlighting.
const CODE_TOKENS = /("(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'|`[^`\n]*`)|(#[^\n]*|\/\/[^\n]*)|(\b\d[\d_.]*\b)|([A-Za-z_][A-Za-z0-9_]*)/g;

const $ = (id) => document.getElementById(id);

function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

// -- safe Markdown ---------------------------------------------------------------------

function highlighted(code) {
  const fragment = document.createDocumentFragment();
  let last = 0;
  for (const match of code.matchAll(CODE_TOKENS)) {
    const [text, string, comment, number, word] = match;
    let kind = "";
    if (string) kind = "tok-str";
    else if (comment) kind = "tok-com";
    else if (number) kind = "tok-num";
    else if (word && KEYWORDS.has(word.toLowerCase())) kind = "tok-kw";
    if (!kind) continue;
    fragment.append(code.slice(last, match.index));
    fragment.append(element("span", kind, text));
    last = match.index + text.length;
  }
  fragment.append(code.slice(last));
  return fragment;
}

function safeUrl(url) {
  try {
    const parsed = new URL(url, location.href);
    return parsed.protocol === "http:" || parsed.protocol === "https:" ? parsed.href : null;
  } catch (_) {
    return null;
  }
}

// Inline Markdown: `code`, **strong**, [text](url "title") (a link only for http(s)).
function inline(text) {
  const fragment = document.createDocumentFragment();
  const pattern = /`([^`]+)`|\*\*([^*]+)\*\*|\[([^\]]+)\]\((\S+?)(?:\s+"[^"]*")?\)/g;
  let last = 0;
  for (const match of text.matchAll(pattern)) {
    fragment.append(text.slice(last, match.index));
    const [, code, strong, label, url] = match;
    if (code !== undefined) fragment.append(element("code", "", code));
    else if (strong !== undefined) fragment.append(element("strong", "", strong));
    else {
      const href = safeUrl(url);
      const target = href ? element("a") : element("span");
      if (href) {
        target.href = href;
        target.rel = "noopener noreferrer";
      }
      target.append(inline(label));
      fragment.append(target);
    }
    last = match.index + match[0].length;
  }
  fragment.append(text.slice(last));
  return fragment;
}

function textBlock(block) {
  const lines = block.split("\n");
  if (/^#{1,6}\s/.test(lines[0]) && lines.length === 1) {
    return element("h4", "md-heading", lines[0].replace(/^#+\s*/, ""));
  }
  if (lines.every((line) => /^\s*([-*+]|\d+[.)])\s+/.test(line))) {
    const list = element(/^\s*\d/.test(lines[0]) ? "ol" : "ul", "md-list");
    for (const line of lines) {
      const item = element("li");
      item.append(inline(line.replace(/^\s*([-*+]|\d+[.)])\s+/, "")));
      list.append(item);
    }
    return list;
  }
  if (lines.every((line) => line.trim().startsWith("|"))) return element("pre", "md-table", block);
  const paragraph = element("p");
  paragraph.append(inline(lines.join(" ")));
  return paragraph;
}

function renderMarkdown(markdown) {
  const fragment = document.createDocumentFragment();
  const lines = markdown.split("\n");
  let text = [];
  const flush = () => {
    for (const block of text.join("\n").split(/\n\s*\n/)) {
      if (block.trim()) fragment.append(textBlock(block.trim()));
    }
    text = [];
  };
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s{0,3}(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[i]);
    if (!open) {
      text.push(lines[i]);
      continue;
    }
    flush();
    const fence = open[1];
    const body = [];
    for (i++; i < lines.length; i++) {
      const close = /^\s{0,3}(`{3,}|~{3,})\s*$/.exec(lines[i]);
      if (close && close[1][0] === fence[0] && close[1].length >= fence.length) break;
      body.push(lines[i]);
    }
    const pre = element("pre", "md-code");
    const code = element("code");
    if (open[2]) code.dataset.lang = open[2];
    code.append(highlighted(body.join("\n")));
    pre.append(code);
    fragment.append(pre);
  }
  flush();
  return fragment;
}

// -- requests --------------------------------------------------------------------------

function headers(role, json = true) {
  const result = { Accept: "application/json, text/event-stream" };
  if (json) result["Content-Type"] = "application/json";
  const key = $(role === "write" ? "write-key" : "api-key").value.trim();
  if (key) result.Authorization = `Bearer ${key}`;
  return result;
}

function setStatus(text, isError = false) {
  const status = $("status");
  status.textContent = text;
  status.classList.toggle("error", isError);
}

async function errorText(response, role = "read") {
  let detail = response.statusText;
  try {
    const body = await response.json();
    detail = body.detail || detail;
    if (body.request_id) detail += ` (request ${body.request_id})`;
  } catch (_) {
    // not JSON: keep the status text
  }
  if (response.status === 401 || response.status === 403) {
    $("key-box").open = true;
    detail += ` — enter a ${role} key under “API keys”.`;
  }
  return `HTTP ${response.status}: ${detail}`;
}

function pages(hit) {
  if (hit.page_start === null || hit.page_start === undefined) return "";
  if (hit.page_end === null || hit.page_end === hit.page_start) return `, p. ${hit.page_start}`;
  return `, pp. ${hit.page_start}–${hit.page_end}`;
}

// Where to open the section: the source, with its anchor when the page had one (a link
// for http(s) sources; a local path is shown as text).
function sourceLine(hit) {
  const line = element("div", "source");
  const location = hit.anchor ? `${hit.source}#${hit.anchor}` : hit.source;
  const href = /^https?:\/\//.test(hit.source) ? safeUrl(location) : null;
  if (href) {
    const link = element("a", "", location);
    link.href = href;
    link.rel = "noopener noreferrer";
    line.append(link);
  } else line.append(location);
  line.append(pages(hit));
  return line;
}

// Its source's version and when its chunk was indexed (neither: an older index).
function provenanceLine(hit) {
  const parts = [];
  if (hit.version) parts.push(`version ${hit.version}`);
  if (hit.indexed_at) parts.push(`indexed ${indexedAt(hit.indexed_at)}`);
  return parts.length ? element("div", "provenance", parts.join(" · ")) : null;
}

// A time of the API (ISO 8601, UTC) as `YYYY-MM-DD HH:MM UTC`.
function indexedAt(value) {
  return `${String(value).slice(0, 16).replace("T", " ")} UTC`;
}

function headerPath(tag, hit) {
  const path = element(tag, "path");
  path.append(inline(hit.headers.join(" › ") || hit.title));
  return path;
}

// A hit's summary with what it is: written by a chat model (which) or quoted from the chunk.
function summaryLine(hit) {
  const line = element("p", "summary");
  const extractive = hit.summary_kind === "extractive";
  const label = extractive
    ? "extractive"
    : hit.summary_model ? `generated by ${hit.summary_model}` : "generated";
  const badge = element("span", `badge ${extractive ? "extractive" : "generated"}`, label);
  badge.dataset.kind = hit.summary_kind || "generated";
  badge.title = extractive
    ? "Quoted from the section: the model's summaries did not pass the summary check"
    : "Written by a language model: check it against the original text";
  line.append(badge, " ", hit.summary);
  return line;
}

function hitItem(hit) {
  const item = element("li", "hit");
  item.append(headerPath("div", hit));
  item.append(sourceLine(hit));
  const provenance = provenanceLine(hit);
  if (provenance) item.append(provenance);
  if (hit.summary) item.append(summaryLine(hit));
  const content = element("details", "content");
  content.append(element("summary", "", "Original text"));
  const body = element("div", "markdown");
  body.append(renderMarkdown(hit.content));
  content.append(body);
  item.append(content);
  return item;
}

function citationItem(hit, number) {
  const item = element("li", "citation");
  item.id = `citation-${number}`;
  const passage = element("details");
  const head = element("summary");
  head.append(headerPath("span", hit));
  passage.append(head, sourceLine(hit));
  const body = element("div", "markdown");
  body.append(renderMarkdown(hit.content));
  passage.append(body);
  item.append(passage);
  return item;
}

function citationLink(label, number) {
  const link = element("a", "cite", label);
  link.href = `#citation-${number}`;
  link.addEventListener("click", (clicked) => {
    clicked.preventDefault();
    const target = $(`citation-${number}`);
    if (target) {
      target.querySelector("details").open = true;
      target.scrollIntoView({ block: "nearest" });
    }
  });
  return link;
}

// The answer rendered as Markdown, with each [n] outside code a link that opens citation n.
function answerText(text) {
  const rendered = element("div", "markdown");
  rendered.append(renderMarkdown(text));
  const walker = document.createTreeWalker(rendered, NodeFilter.SHOW_TEXT);
  const nodes = [];
  while (walker.nextNode()) {
    if (!walker.currentNode.parentElement.closest("pre, code")) nodes.push(walker.currentNode);
  }
  for (const node of nodes) {
    const text = node.textContent;
    const pieces = document.createDocumentFragment();
    let last = 0;
    for (const match of text.matchAll(/\[(\d+)\]/g)) {
      pieces.append(text.slice(last, match.index), citationLink(match[0], match[1]));
      last = match.index + match[0].length;
    }
    if (last === 0) continue;
    pieces.append(text.slice(last));
    node.replaceWith(pieces);
  }
  return rendered;
}

// -- search and ask --------------------------------------------------------------------

function reset() {
  $("answer").hidden = true;
  $("results").hidden = true;
  $("answer-text").textContent = "";
  $("answer-text").classList.remove("draft");
  $("answer-text").removeAttribute("aria-busy");
  $("answer-kind").textContent = "";
  $("answer-kind").className = "badge";
  delete $("answer-kind").dataset.kind;
  $("citations").replaceChildren();
  $("hits").replaceChildren();
}

function searchBody(query) {
  const body = { query, k: Number($("k").value) || 10 };
  if ($("mode").value) body.mode = $("mode").value;
  const prefix = $("source-prefix").value.trim();
  if (prefix) body.source_prefix = prefix;
  return body;
}

async function search(query) {
  setStatus("Searching…");
  const response = await fetch("/search", {
    method: "POST",
    headers: headers("read"),
    body: JSON.stringify(searchBody(query)),
  });
  if (!response.ok) {
    setStatus(await errorText(response), true);
    return;
  }
  const hits = await response.json();
  $("hits").replaceChildren(...hits.map(hitItem));
  $("results").hidden = false;
  setStatus(hits.length ? `${hits.length} results` : "No results.");
}

// Server-sent events out of a fetch body: blocks separated by a blank line, each with
// `event:` and `data:` lines.
async function* events(response) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) event = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (data.length) yield { event, data: JSON.parse(data.join("\n")) };
    }
  }
}

function showKind(done) {
  const badge = $("answer-kind");
  badge.textContent = KIND_LABELS[done.kind] || done.kind;
  badge.className = `badge ${done.kind}`;
  badge.dataset.kind = done.kind;
}

async function ask(question) {
  setStatus("Thinking…");
  const response = await fetch("/ask", {
    method: "POST",
    headers: headers("read"),
    body: JSON.stringify({ question, stream: true }),
  });
  if (!response.ok) {
    setStatus(await errorText(response), true);
    return;
  }
  const text = $("answer-text");
  let streamed = "";
  $("answer").hidden = false;
  for await (const { event, data } of events(response)) {
    if (event === "token") {
      streamed += data.text;
      text.textContent = streamed;
      // Unchecked text (a passage may tell the model what to write): shown as plain,
      // provisional text, with no links, until `done` says what the answer is.
      if (data.draft !== false) showDraft();
      setStatus("Writing a draft; it is checked against the passages when complete…");
    } else if (event === "citations") {
      $("citations").replaceChildren(...data.map((hit, i) => citationItem(hit, i + 1)));
    } else if (event === "done") {
      text.classList.remove("draft");
      text.removeAttribute("aria-busy");
      text.replaceChildren(answerText(data.answer));
      showKind(data);
      setStatus(
        data.draft !== "replaced"
          ? "Done."
          : data.kind === "extractive" && data.support === null
            ? "The model did not answer from the passages: the best one is quoted instead."
            : "The draft was not grounded in the passages and was replaced" +
              (data.kind === "extractive" ? ": quoted instead." : "."),
      );
    } else if (event === "error") {
      text.classList.remove("draft");
      text.removeAttribute("aria-busy");
      setStatus(`${data.error}: ${data.detail}`, true);
    }
  }
}

function showDraft() {
  const text = $("answer-text");
  text.classList.add("draft");
  text.setAttribute("aria-busy", "true");
  const badge = $("answer-kind");
  badge.textContent = "draft: not yet checked";
  badge.className = "badge draft";
}

// -- sources and uploads ---------------------------------------------------------------

async function loadDocuments() {
  const response = await fetch("/documents", { headers: headers("read") });
  if (!response.ok) {
    setStatus(await errorText(response), true);
    return;
  }
  const rows = (await response.json()).map((item) => {
    const row = element("tr");
    const cells = [
      item.source, item.title, item.chunks, item.status, item.pending, item.version || "",
      indexedAt(item.indexed_at),
    ];
    for (const value of cells) row.append(element("td", "", String(value)));
    return row;
  });
  $("documents").tBodies[0].replaceChildren(...rows);
  setStatus(`${rows.length} sources`);
}

function showJob(job) {
  $("job").hidden = false;
  $("job-id").textContent = job.id;
  const state = $("job-state");
  state.textContent = job.state;
  state.className = `badge ${job.state}`;
  state.dataset.state = job.state;
  const progress = job.progress || {};
  const total = progress.summaries_total || 0;
  const parts = [`${progress.sources_loaded || 0} sources read`, `${progress.chunks || 0} chunks`];
  if (total) parts.push(`summarized ${progress.summarized || 0}/${total}`);
  if (job.reason) parts.push(job.reason);
  if (job.errors && job.errors.length) parts.push(job.errors.join("; "));
  $("job-progress").textContent = parts.join(" · ");
  $("job-bar").value = job.state === "done" ? 1 : total ? (progress.summarized || 0) / total : 0;
}

async function followJob(location) {
  for (;;) {
    const response = await fetch(location, { headers: headers("write") });
    if (!response.ok) {
      setStatus(await errorText(response, "write"), true);
      return;
    }
    const job = await response.json();
    showJob(job);
    if (JOB_ENDS.has(job.state)) {
      setStatus(`Job ${job.state}.`, job.state !== "done");
      await loadDocuments();
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

async function upload() {
  const form = new FormData();
  for (const file of $("files").files) form.append("files", file, file.name);
  setStatus("Uploading…");
  const response = await fetch("/documents", {
    method: "POST",
    headers: headers("write", false),
    body: form,
  });
  if (response.status !== 202) {
    setStatus(await errorText(response, "write"), true);
    return;
  }
  const job = await response.json();
  showJob(job);
  setStatus("Queued; the job runs in the service.");
  await followJob(response.headers.get("Location") || `/jobs/${job.id}`);
}

// -- the page --------------------------------------------------------------------------

function busy(form, isBusy) {
  for (const button of form.querySelectorAll("button")) button.disabled = isBusy;
}

async function running(form, action) {
  busy(form, true);
  try {
    await action();
  } catch (error) {
    setStatus(`The request failed: ${error.message}`, true);
  } finally {
    busy(form, false);
  }
}

function route() {
  const sources = location.hash === "#sources";
  $("search-view").hidden = sources;
  $("sources-view").hidden = !sources;
  $("nav-search").classList.toggle("current", !sources);
  $("nav-sources").classList.toggle("current", sources);
  setStatus("");
  if (sources) running($("upload-form"), loadDocuments);
}

function keepKey(input, name) {
  input.value = sessionStorage.getItem(name) || "";
  input.addEventListener("change", () => sessionStorage.setItem(name, input.value.trim()));
}

function start() {
  keepKey($("api-key"), STORAGE.read);
  keepKey($("write-key"), STORAGE.write);
  $("query-form").addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    const query = $("query").value.trim();
    if (!query) return;
    const action = submitted.submitter && submitted.submitter.value === "ask" ? ask : search;
    reset();
    running(submitted.target, () => action(query));
  });
  $("upload-form").addEventListener("submit", (submitted) => {
    submitted.preventDefault();
    running(submitted.target, upload);
  });
  window.addEventListener("hashchange", route);
  route();
  const initial = new URLSearchParams(location.search).get("q");
  if (initial && location.hash !== "#sources") {
    $("query").value = initial;
    $("search-button").click();
  }
}

start();
