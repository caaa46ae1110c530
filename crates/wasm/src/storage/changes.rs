//! Change notices between stores: a BroadcastChannel named
//! `agent-compaction:<database>`. After each committed change a store posts
//! `{ type, sessionId, revision }` (`sourceId` too for "forked"; no
//! revision for "deleted"), in the task after the call that made it settles
//! (the shim's `postChange`: the caller does not wait for the post; a
//! store's pending notices go out when it closes). A store hears the notices
//! of every other store on the same database (other tabs, workers, and other
//! `SessionStore`s in the same page; BroadcastChannel never delivers a post
//! to its own sender), updates what it caches, then calls the app's `onChange`
//! listeners. Its own changes are not delivered: their promises say so.
//! The notice's shape and what hearing one does are the core's
//! (`core::storage::changes`); this opens the channel, posts and delivers.

use super::records::get;
use super::Inner;
use crate::js::values::{shape, Opt};
use agent_compaction_core::storage::arguments::function;
pub use agent_compaction_core::storage::changes::Change;
use agent_compaction_core::storage::changes::{channel_name, heard, Notice, Posted};
use js_sys::{Function, Set};
use std::rc::{Rc, Weak};
use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/src/js/shim.js")]
extern "C" {
    #[wasm_bindgen(js_name = openChannel)]
    fn open_channel(name: &str, on_message: &Closure<dyn FnMut(JsValue)>) -> JsValue;
    #[wasm_bindgen(js_name = postChange)]
    fn post_change(channel: &JsValue, event: &JsValue);
    #[wasm_bindgen(js_name = closeChannel)]
    fn close_channel(channel: &JsValue);
    fn subscribe(listeners: &Set, listener: &Function) -> JsValue;
    fn deliver(listeners: &Set, event: &JsValue);
}

/// The kinds of change a store announces.
pub struct Channel {
    channel: JsValue,
    _on_message: Closure<dyn FnMut(JsValue)>,
}

impl Channel {
    pub fn open(name: &str, inner: Weak<Inner>) -> Channel {
        let on_message = Closure::<dyn FnMut(JsValue)>::new(move |data: JsValue| {
            if let Some(inner) = inner.upgrade() {
                received(&inner, &data);
            }
        });
        let channel = open_channel(&channel_name(name), &on_message);
        Channel {
            channel,
            _on_message: on_message,
        }
    }
}

impl Drop for Channel {
    /// Closed with its receiving closure: a message after that would call
    /// a dropped closure.
    fn drop(&mut self) {
        if !self.channel.is_null() {
            close_channel(&self.channel);
        }
    }
}

/// Tells the other stores about a committed change.
pub fn announce(
    inner: &Inner,
    change: Change,
    id: &str,
    revision: Option<f64>,
    source: Option<&str>,
) {
    let Some(channel) = inner.channel.borrow().as_ref().map(|c| c.channel.clone()) else {
        return;
    };
    if channel.is_null() {
        return;
    }
    let notice = Notice {
        change,
        session_id: id,
        revision,
        source_id: source,
    };
    post_change(&channel, &shape(notice.shape()));
}

/// A notice from another store: what this store cached of that session is
/// out of date unless it is at the announced revision; then the app hears.
fn received(inner: &Rc<Inner>, data: &JsValue) {
    let Some(posted) = Posted::read(|key| Opt(get(data, key))) else {
        return;
    };
    let Posted { kind, id, revision } = posted;
    heard(&mut inner.sessions.borrow_mut(), &kind, &id, revision);
    // The listeners may call back into the store: no borrow is held here.
    deliver(&inner.listeners, data);
}

/// `onChange(listener)`: the function that unsubscribes it.
pub fn on_change(inner: &Inner, listener: JsValue) -> Result<JsValue, JsValue> {
    let listener = function("SessionStore.onChange", "listener", &Opt(listener));
    let listener = listener.map_err(super::records::thrown)?;
    Ok(subscribe(&inner.listeners, &listener))
}
