// The live view of a raxol-ssh session. The server sends the view as HTML
// it rendered and escaped ("frame": the whole view; "patch": widgets that
// changed), what agents did as a sentence for the live region
// ("announce"), the browser's role once the owner let it in ("role"), the
// approval prompts on the owner's page ("prompts"), and "end". A driver's
// clicks, keys and pastes go back as events for the widget they happened
// in (POST view/input); the page itself changes only when the server says
// so. An observer's page sends nothing.
"use strict";
(function () {
  const view = document.getElementById("view");
  const announce = document.getElementById("announce");
  const state = document.getElementById("state");
  const roleEl = document.getElementById("role");
  const promptsEl = document.getElementById("prompts");
  const base = location.pathname.replace(/\/+$/, "");
  let role = view.dataset.role || "asking";
  const drives = () => role === "driver" || role === "owner";

  function post(path, body) {
    return fetch(base + path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    }).then((r) => r.json().then((j) => {
      if (!r.ok) { state.textContent = j.error || r.statusText; }
      return j;
    })).catch(() => { state.textContent = "Could not reach the session."; });
  }

  // Input is sent one event at a time, in order.
  let queue = Promise.resolve();
  function send(ev) {
    if (!drives()) { return; }
    queue = queue.then(() => post("/input", ev));
  }

  const widgetOf = (el) => {
    const w = el && el.closest ? el.closest("[data-id]") : null;
    return w ? w.dataset.id : "";
  };

  // Keys as the server names them (raxol_send_key's names).
  const named = {
    Enter: "enter", Escape: "esc", Backspace: "backspace", Delete: "delete",
    ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right",
    Home: "home", End: "end", PageUp: "pgup", PageDown: "pgdown", " ": "space",
  };
  function keyName(e) {
    if (e.metaKey) { return ""; }
    if (e.ctrlKey && e.key.length === 1) { return "ctrl+" + e.key.toLowerCase(); }
    if (e.altKey && e.key.length === 1) { return "alt+" + e.key.toLowerCase(); }
    if (named[e.key]) { return named[e.key]; }
    if (e.key.length === 1 || [...e.key].length === 1) { return e.key; }
    return "";
  }

  view.addEventListener("keydown", (e) => {
    if (e.key === "Tab") { return; } // the browser's own focus moves
    const id = widgetOf(e.target);
    if (!id) { return; }
    if (!drives()) {
      if (e.key.length === 1 || e.key === "Backspace" || e.key === "Delete" || e.key === "Enter") { e.preventDefault(); }
      return;
    }
    const k = keyName(e);
    if (!k) { return; }
    e.preventDefault(); // the server's frame shows what the key did
    send({ id: id, kind: "key", key: k });
  });

  view.addEventListener("paste", (e) => {
    e.preventDefault();
    const id = widgetOf(e.target);
    const text = (e.clipboardData || window.clipboardData).getData("text");
    if (id && text) { send({ id: id, kind: "paste", text: text }); }
  });

  view.addEventListener("click", (e) => {
    const target = e.target.closest("button, input[type=checkbox], [role=tab], [role=menuitem], [role=option]");
    if (!target) { return; }
    e.preventDefault(); // a checkbox changes when the server says so
    const id = widgetOf(target);
    if (id) { send({ id: id, kind: "click" }); }
  });

  // Replacing the view keeps the element with focus focused, and a text
  // field's caret at its end, so that typing goes on.
  function keepFocus(change) {
    const active = document.activeElement;
    const id = active && view.contains(active) ? active.id : "";
    change();
    if (!id) { return; }
    const again = document.getElementById(id);
    if (again && again !== document.activeElement) {
      again.focus();
      if (typeof again.value === "string" && again.setSelectionRange) {
        try { again.setSelectionRange(again.value.length, again.value.length); } catch (_) { /* not a text field */ }
      }
    }
  }

  const es = new EventSource(base + "/events");
  es.addEventListener("state", (e) => { state.textContent = e.data; });
  es.addEventListener("role", (e) => {
    const r = JSON.parse(e.data);
    role = r.role;
    view.dataset.role = role;
    roleEl.textContent = r.says;
    state.textContent = "";
  });
  es.addEventListener("frame", (e) => { keepFocus(() => { view.innerHTML = e.data; }); });
  es.addEventListener("patch", (e) => {
    const p = JSON.parse(e.data);
    keepFocus(() => {
      for (const w of p) {
        const old = view.querySelector("[data-id=\"" + CSS.escape(w.id) + "\"]");
        if (!old) { continue; }
        const t = document.createElement("template");
        t.innerHTML = w.html;
        old.replaceWith(t.content);
      }
    });
  });
  es.addEventListener("announce", (e) => { announce.textContent = e.data; });
  es.addEventListener("prompts", (e) => { showPrompts(JSON.parse(e.data)); });
  es.addEventListener("end", (e) => {
    state.textContent = e.data || "The session ended.";
    role = "ended";
    promptsEl.hidden = true;
    es.close();
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      state.textContent = "Disconnected from the session.";
    }
  };

  // The owner's approval prompts: the buttons answer once the prompt has
  // been shown for the arming delay, as keys in the terminal do.
  function showPrompts(list) {
    promptsEl.replaceChildren();
    promptsEl.hidden = list.length === 0;
    for (const p of list) {
      const box = document.createElement("div");
      box.className = "raxol-prompt";
      box.setAttribute("role", "alertdialog");
      box.setAttribute("aria-label", "Approve an agent's action?");
      const h = document.createElement("h2");
      h.textContent = "Approve an agent's action?";
      const what = document.createElement("p");
      what.textContent = p.agent + " wants to run " + p.tool + (p.widget ? " on " + p.widget : "");
      box.append(h, what);
      for (const extra of [p.prompt, p.args && p.args !== "{}" ? "arguments: " + p.args : ""]) {
        if (extra) {
          const x = document.createElement("p");
          x.textContent = extra;
          box.append(x);
        }
      }
      const note = document.createElement("p");
      note.className = "raxol-arming";
      const buttons = [["once", "Allow once"], ["session", "Allow for this session"], ["deny", "Deny"]].map(([a, label]) => {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = label;
        b.dataset.answer = a;
        b.disabled = p.armed_in_ms > 0;
        b.addEventListener("click", () => {
          for (const x of buttons) { x.disabled = true; }
          post("/answer", { prompt: p.id, answer: a });
        });
        return b;
      });
      box.append(...buttons, note);
      if (p.armed_in_ms > 0) {
        note.textContent = "Answer buttons active in " + (p.armed_in_ms / 1000).toFixed(1) + "s";
        setTimeout(() => {
          for (const x of buttons) { x.disabled = false; }
          note.textContent = "";
        }, p.armed_in_ms);
      }
      promptsEl.append(box);
    }
  }
})();
