//! One writer per session across tabs: an exclusive Web Lock named
//! `agent-compaction:<database>:<sessionId>`.
//!
//! The store's own writes need it only around their read, revision check
//! and write transaction, never across an await of app code.
//! `withSessionLock` holds it around an app's callback (a whole
//! load → compact → save), and while it does, this store's own calls on
//! that session run without requesting it again: Web Locks are not
//! re-entrant, so a save inside the callback would otherwise wait for the
//! callback that waits for it. Where `navigator.locks` is missing (Node,
//! insecure contexts) the lock is a queue in this realm (the shim).
//!
//! The shim keeps a lock it was granted for a short while after each call
//! (a lease, see `withLock` in `shim/locks.js`): the next call on the same
//! session — a turn's next message — runs under it without another request
//! to the browser's lock manager. A context that finds the lock taken tells
//! the holder, which then lets it go as soon as its current call ends. When
//! a lease is reused, kept or let go is the core's policy
//! (`core::storage::locks`), installed in the shim by [`install_policy`].
//!
//! No call waits for a lock longer than the store's lock timeout
//! (`lockTimeoutMs`, `core::storage::locks::lock_timeout`): the shim then
//! takes it out of the queue and the call fails with `LockTimeoutError`
//! without having run (nothing is written without the lock).

use super::records::{store_error, thrown};
use super::{string_arg, Inner};
use crate::js::values::spawn;
use crate::js::values::Opt;
use crate::js::values::Task;
use agent_compaction_core::storage::arguments::function;
use agent_compaction_core::storage::error::StoreError;
use agent_compaction_core::storage::locks as lease;
use js_sys::Promise;
use std::future::Future;
use std::rc::Rc;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = withLock)]
    fn with_lock(name: &str, callback: &JsValue, timeout_ms: f64) -> Promise;
    #[wasm_bindgen(js_name = lockTimedOut)]
    fn lock_timed_out(e: &JsValue) -> bool;
    #[wasm_bindgen(js_name = releaseLocks)]
    fn release_locks(prefix: &str);
    #[wasm_bindgen(js_name = takeLease)]
    fn take_lease(name: &str) -> JsValue;
    #[wasm_bindgen(js_name = returnLease)]
    fn return_lease(lease: &JsValue);
    #[wasm_bindgen(js_name = setLeasePolicy)]
    fn set_lease_policy(decide: &Policy, channel: &str);
}

/// `(question, calls, bits) -> answer`: `core::storage::locks::answer`.
type Policy = Closure<dyn Fn(u32, u32, u32) -> f64>;

thread_local! {
    static POLICY: std::cell::OnceCell<Policy> = const { std::cell::OnceCell::new() };
}

/// Hands the shim the lease policy (`core::storage::locks`), once per
/// realm: the shim asks it whenever a lease is to be reused or let go.
pub fn install_policy() {
    POLICY.with(|policy| {
        policy.get_or_init(|| {
            let decide = Policy::new(lease::answer);
            set_lease_policy(&decide, lease::LOCK_CHANNEL);
            decide
        });
    });
}

pub fn release(name: &str) {
    release_locks(&lease::lock_prefix(name));
}

/// Runs `body` holding session `id`'s lock (at once when this store
/// already holds it for a `withSessionLock` callback); `action` fails with
/// `LockTimeoutError` when the lock does not come in time.
pub async fn exclusive(
    inner: &Rc<Inner>,
    id: &str,
    action: &'static str,
    body: impl Future<Output = Result<JsValue, JsValue>> + 'static,
) -> Result<JsValue, JsValue> {
    locked(inner, id, action, Box::pin(body), true).await
}

// Not generic: one copy in the `.wasm` for every caller.
/// With `direct`, a lock this page keeps with nothing queued for it is
/// taken at once, without a promise round. Not for a `withSessionLock`
/// callback: its `Held` would then let this store's calls made in the same
/// tick skip the queue they must wait in.
async fn locked(
    inner: &Rc<Inner>,
    id: &str,
    action: &'static str,
    body: Task,
    direct: bool,
) -> Result<JsValue, JsValue> {
    if inner.sessions.borrow().holds(id) {
        return body.await;
    }
    let name = lease::lock_name(&inner.name, id);
    if direct {
        let lease = take_lease(&name);
        if !lease.is_null() {
            let _taken = Taken(lease);
            return body.await;
        }
    }
    let callback = Closure::once_into_js(move || spawn(body));
    let waited_ms = inner.lock_timeout_ms;
    JsFuture::from(with_lock(&name, &callback, waited_ms))
        .await
        .map_err(|e| match lock_timed_out(&e) {
            true => store_error(StoreError::LockTimeout {
                action,
                id: id.to_owned(),
                waited_ms,
            }),
            false => e,
        })
}

/// A kept lock taken by [`take_lease`], handed back when dropped.
struct Taken(JsValue);

impl Drop for Taken {
    fn drop(&mut self) {
        return_lease(&self.0);
    }
}

/// `withSessionLock(sessionId, callback)`: the callback's result, with the
/// session's lock held until its promise settles.
pub async fn with_session_lock(
    inner: Rc<Inner>,
    id: JsValue,
    callback: JsValue,
) -> Result<JsValue, JsValue> {
    const ACTION: &str = "SessionStore.withSessionLock";
    let id = string_arg(&id, "sessionId")?;
    let callback = function(ACTION, "callback", &Opt(callback)).map_err(thrown)?;
    let holder = inner.clone();
    let held_id = id.clone();
    let body = async move {
        let _held = Held::new(holder, held_id);
        let result = callback.call0(&JsValue::UNDEFINED)?;
        JsFuture::from(Promise::resolve(&result)).await
    };
    locked(&inner, &id, ACTION, Box::pin(body), false).await
}

/// Marks a session's lock as held by this store while it lives.
struct Held {
    inner: Rc<Inner>,
    id: String,
}

impl Held {
    fn new(inner: Rc<Inner>, id: String) -> Held {
        inner.sessions.borrow_mut().hold(&id);
        Held { inner, id }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.inner.sessions.borrow_mut().release(&self.id);
    }
}
