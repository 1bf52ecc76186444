//! The browser interface: HTML pages for the signed-in owner, and the landing page for everyone else.

pub mod accounts;
pub mod admin;
pub mod charts;
pub mod errors;
pub mod files;
pub mod guest_links;
pub mod home;
pub mod page;
pub mod sign_in;
pub mod single_sign_on;
pub mod tokens;
pub mod views;

pub use errors::{accepts_html, html_errors, method_not_allowed, unauthorized};
