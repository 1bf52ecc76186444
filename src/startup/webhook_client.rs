//! The HTTP client that webhook deliveries go out with (reqwest over rustls), behind `services::webhooks::Transport`.

use std::pin::Pin;
use std::time::Duration;

use crate::services::webhooks::{Outgoing, Transport};

/// How much of a receiver's answer is read before the connection is dropped.
const ANSWER_READ: usize = 4 * 1024;

/// Each request ends within the timeout, from connecting to the answer's last byte.
pub struct WebhookClient(reqwest::Client);

impl WebhookClient {
    pub fn new(timeout: Duration) -> Result<Self, reqwest::Error> {
        // A receiver answers where it was asked; a redirect is a misconfigured URL, shown as such.
        let client = http_client(concat!("blobdrop-webhook/", env!("CARGO_PKG_VERSION")), timeout)?;
        Ok(WebhookClient(client))
    }
}

/// A client whose every request ends within `timeout`, from connecting to the answer's last byte,
/// and that follows no redirect (webhooks, single sign-on).
pub(super) fn http_client(user_agent: &'static str, timeout: Duration) -> Result<reqwest::Client, reqwest::Error> {
    reqwest::Client::builder()
        .user_agent(user_agent)
        .timeout(timeout)
        .connect_timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
}

impl Transport for WebhookClient {
    fn post(&self, request: Outgoing) -> Pin<Box<dyn Future<Output = Result<u16, String>> + Send>> {
        let mut builder = self.0.post(&request.url);
        for (name, value) in request.headers {
            builder = builder.header(name, value);
        }
        let sent = builder.body(request.body).send();
        Box::pin(async move {
            let mut response = sent.await.map_err(|error| describe(&error))?;
            let status = response.status().as_u16();
            // Nobody reads a receiver's answer but its status: take at most `ANSWER_READ` of it and
            // drop the connection. Reading it whole let a 1 GiB answer take blobdrop from 276 MiB
            // to 2.3 GiB of memory.
            let mut read = 0;
            while read < ANSWER_READ {
                match response.chunk().await.map_err(|error| describe(&error))? {
                    Some(chunk) => read += chunk.len(),
                    None => break,
                }
            }
            Ok(status)
        })
    }
}

/// The one-line reason of a failed request, without the URL (the settings page shows it already).
pub(super) fn describe(error: &reqwest::Error) -> String {
    let what = if error.is_timeout() {
        "no answer within the timeout"
    } else if error.is_connect() {
        "cannot connect"
    } else {
        "the request failed"
    };
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    format!("{what}: {cause}")
}
