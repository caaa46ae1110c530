// Change notices between SessionStores on one database: the BroadcastChannel,
// posts sent in the task after the change's call settled, and the app's
// onChange listeners. What a notice means for a store's cache is decided in
// Rust (crates/wasm/src/storage/changes.rs). Imported by changes.rs.

// The store's BroadcastChannel, or null where there is none. It must not
// keep a Node process alive.
export function openChannel(name, onMessage) {
  if (typeof BroadcastChannel !== "function") return null;
  const channel = new BroadcastChannel(name);
  channel.onmessage = (e) => onMessage(e.data);
  if (typeof channel.unref === "function") channel.unref();
  return channel;
}

// Notices go out in the task after the change's call settled: a post is a
// round trip to the browser (~0.1 ms) that the caller's promise need not
// wait for. In order, and all of them before the channel closes.
const outbox = new Map();
let outboxTask;

function flushSoon() {
  if (typeof MessageChannel !== "function") {
    setTimeout(flushChanges, 0);
    return;
  }
  // A message rather than a timer: a hidden page's timers are throttled.
  if (!outboxTask) {
    outboxTask = new MessageChannel();
    outboxTask.port1.onmessage = flushChanges;
    if (typeof outboxTask.port1.unref === "function") outboxTask.port1.unref();
  }
  outboxTask.port2.postMessage(null);
}

function flushChanges() {
  const channels = [...outbox];
  outbox.clear();
  for (const [channel, events] of channels) {
    for (const event of events) {
      try {
        channel.postMessage(event);
      } catch {
        // A closed channel: nobody left to tell.
      }
    }
  }
}

export function postChange(channel, event) {
  if (outbox.size === 0) flushSoon();
  const events = outbox.get(channel);
  if (events) events.push(event);
  else outbox.set(channel, [event]);
}

export function closeChannel(channel) {
  const events = outbox.get(channel);
  outbox.delete(channel);
  for (const event of events ?? []) {
    try {
      channel.postMessage(event);
    } catch {
      // Closed already.
    }
  }
  channel.close();
}

// Adds `listener` to the Set `listeners`; returns the function removing it.
export function subscribe(listeners, listener) {
  const entry = (event) => listener(event);
  listeners.add(entry);
  return () => {
    listeners.delete(entry);
  };
}

// Calls every listener; one that throws does not stop the others (its
// error is reported as uncaught, as an event listener's would be).
export function deliver(listeners, event) {
  for (const listener of [...listeners]) {
    try {
      listener(event);
    } catch (e) {
      setTimeout(() => {
        throw e;
      });
    }
  }
}
