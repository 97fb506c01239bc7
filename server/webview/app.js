// The live view of a raxol-ssh session: the server sends the whole view
// as HTML it rendered and escaped (event "frame"), what agents did as a
// sentence for the live region ("announce"), and "end" when the session
// ends or this viewer's access does. No input is sent back: a watcher's
// page has none.
"use strict";
(function () {
  const view = document.getElementById("view");
  const announce = document.getElementById("announce");
  const state = document.getElementById("state");
  const es = new EventSource(location.pathname.replace(/\/+$/, "") + "/events");
  es.addEventListener("frame", (e) => { view.innerHTML = e.data; });
  es.addEventListener("announce", (e) => { announce.textContent = e.data; });
  es.addEventListener("end", (e) => {
    state.textContent = e.data || "The session ended.";
    es.close();
  });
  es.onerror = () => {
    if (es.readyState === EventSource.CLOSED) {
      state.textContent = "Disconnected from the session.";
    }
  };
})();
