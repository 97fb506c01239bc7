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
  const browsersEl = document.getElementById("browsers");
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

  // The element an Enter or Space the page sent as a key was pressed on,
  // until that press is over: the click a browser makes of it (on a
  // button, on its keypress or keyup) is the same press, not a second one.
  let pressed = null;

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
    if (k === "enter" || k === "space") { pressed = e.target; }
    send({ id: id, kind: "key", key: k });
  });
  view.addEventListener("keypress", (e) => {
    if (pressed && e.target === pressed) { e.preventDefault(); }
  });
  view.addEventListener("keyup", () => {
    setTimeout(() => { pressed = null; }, 0); // after the keyup's own click
  });

  view.addEventListener("paste", (e) => {
    e.preventDefault();
    const id = widgetOf(e.target);
    const text = (e.clipboardData || window.clipboardData).getData("text");
    if (id && text) { send({ id: id, kind: "paste", text: text }); }
  });

  // A click on a part of a composite widget (a tab, a row, an option, a
  // menu item, a tree item, a dialog's button) is sent as the keys a
  // terminal user would press for it: the server's click has no position
  // in a browser, and a click at the widget's corner would pick its first
  // part. The keys take the widget's own event path, as a terminal's do.
  const repeat = (key, n) => Array.from({ length: Math.max(n, 0) }, () => key);
  function keysFor(target) {
    const role = target.getAttribute("role");
    const action = target.dataset.action;
    if (target.closest("dialog") && (action === "confirm" || action === "dismiss")) {
      return [action === "confirm" ? "enter" : "esc"];
    }
    if (role === "tab") {
      const list = target.closest("[role=tablist]");
      const tabs = list ? [...list.querySelectorAll("[role=tab]")] : [];
      const to = tabs.indexOf(target);
      const from = tabs.findIndex((x) => x.getAttribute("aria-selected") === "true");
      if (to < 0 || to === from) { return []; }
      if (to === 0) { return ["home"]; }
      if (to === tabs.length - 1) { return ["end"]; }
      if (from < 0) { return ["home"].concat(repeat("right", to)); }
      return repeat(to > from ? "right" : "left", Math.abs(to - from));
    }
    // A list's part: to the top, down to it, then choose it.
    let i = -1;
    if (role === "option" || target.matches("tr[data-index]")) {
      i = parseInt(target.dataset.index, 10);
    } else if (role === "menuitem") {
      const menu = target.closest(".raxol-menu");
      i = menu ? [...menu.querySelectorAll("[role=menuitem]:not([disabled])")].indexOf(target) : -1;
    } else if (role === "treeitem") {
      const tree = target.closest("[role=tree]");
      i = tree ? [...tree.querySelectorAll("[role=treeitem]")].indexOf(target) : -1;
    }
    if (!(i >= 0)) { return null; }
    return ["home"].concat(repeat("down", i), ["enter"]);
  }

  view.addEventListener("click", (e) => {
    const target = e.target.closest("button, input[type=checkbox], [role=tab], [role=menuitem], [role=option], [role=treeitem], tbody tr[data-index]");
    if (!target || !view.contains(target)) { return; }
    e.preventDefault(); // a checkbox changes when the server says so
    if (e.detail === 0 && pressed && pressed.contains(target)) { return; } // the key was sent
    const id = widgetOf(target);
    if (!id || !drives()) { return; }
    const keys = keysFor(target);
    if (keys === null) {
      send({ id: id, kind: "click" });
      return;
    }
    for (const k of keys) { send({ id: id, kind: "key", key: k }); }
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
  es.addEventListener("browsers", (e) => { showBrowsers(JSON.parse(e.data)); });
  es.addEventListener("end", (e) => {
    state.textContent = e.data || "The session ended.";
    role = "ended";
    view.dataset.role = role;
    promptsEl.hidden = true;
    browsersEl.hidden = true;
    es.close();
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      state.textContent = "Disconnected from the session.";
    }
  };

  // The owner's approval prompts: the buttons answer once the prompt has
  // been shown for the arming delay, as keys in the terminal do.
  // A prompt already shown keeps its element: the list comes again with
  // every frame while a prompt arms (its armed_in_ms counts down), and a
  // box rebuilt under the pointer would lose the click on its button.
  const shownPrompts = new Map(); // prompt id → its box
  function showPrompts(list) {
    const live = new Set(list.map((p) => p.id));
    for (const [id, box] of shownPrompts) {
      if (!live.has(id)) {
        box.remove();
        shownPrompts.delete(id);
      }
    }
    for (const p of list) {
      let box = shownPrompts.get(p.id);
      if (!box) {
        box = promptBox(p);
        shownPrompts.set(p.id, box);
      }
      promptsEl.append(box); // in the list's order
    }
    promptsEl.hidden = list.length === 0;
  }

  function promptBox(p) {
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
        post("/answer", { prompt: p.id, answer: a }).then((j) => {
          // Not taken (the session said why in #state): answer again.
          if (!j || !j.answered) { for (const x of buttons) { x.disabled = false; } }
        });
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
    return box;
  }
  // The owner's list of the browsers on the session, each but their own
  // with a button that removes it.
  function showBrowsers(list) {
    const items = list.map((b) => {
      const li = document.createElement("li");
      li.textContent = b.name + " (" + b.role + (b.you ? ", you" : "") + ") ";
      if (!b.you) {
        const rm = document.createElement("button");
        rm.type = "button";
        rm.textContent = "Remove";
        rm.setAttribute("aria-label", "Remove " + b.name);
        rm.addEventListener("click", () => {
          rm.disabled = true;
          post("/remove", { name: b.name });
        });
        li.append(rm);
      }
      return li;
    });
    const ul = document.createElement("ul");
    ul.append(...items);
    browsersEl.replaceChildren(ul);
    browsersEl.hidden = list.length === 0;
  }
})();
