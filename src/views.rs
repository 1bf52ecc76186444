//! Askama page structs: one per template in `templates/`.

use askama::Template;

#[derive(Template)]
#[template(path = "home.html")]
pub struct HomePage<'a> {
    pub base_url: &'a str,
    pub version: &'a str,
}
