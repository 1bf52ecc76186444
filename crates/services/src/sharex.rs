//! ShareX and Flameshot: the custom uploader file (`.sxcu`) and the shell line that send screenshots here.

use std::collections::BTreeMap;

use serde::Serialize;

/// The label of a token made for ShareX when none is given.
pub const DEFAULT_LABEL: &str = "ShareX";

/// The name the uploader file is offered under; ShareX imports a `.sxcu` on a double click.
pub const FILE_NAME: &str = "blobdrop.sxcu";

/// A ShareX custom uploader, in the field names of ShareX's SXCU format (ShareX 14 syntax:
/// `{json:PATH}`, where ShareX puts `$.` before a path that lacks it).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "PascalCase")]
pub struct SharexUploader {
    pub version: &'static str,
    pub name: String,
    pub destination_type: &'static str,
    pub request_method: &'static str,
    #[serde(rename = "RequestURL")]
    pub request_url: String,
    #[schema(value_type = BTreeMap<String, String>)]
    pub headers: BTreeMap<&'static str, String>,
    pub body: &'static str,
    pub file_form_name: &'static str,
    #[serde(rename = "URL")]
    pub url: &'static str,
    #[serde(rename = "DeletionURL")]
    pub deletion_url: &'static str,
    pub error_message: &'static str,
}

/// The uploader for the server at `base_url` (no trailing slash) with `token`: a multipart `POST /`
/// asking for JSON, whose answer is an array of one file, so its link is `[0].url` and its
/// deletion link `[0].delete_url`.
pub fn uploader(base_url: &str, token: &str) -> SharexUploader {
    let host = base_url.split_once("://").map_or(base_url, |(_, host)| host);
    SharexUploader {
        version: "17.0.0",
        name: format!("blobdrop ({host})"),
        destination_type: "ImageUploader, TextUploader, FileUploader",
        request_method: "POST",
        request_url: format!("{base_url}/"),
        headers: BTreeMap::from([("Authorization", format!("Bearer {token}")), ("Accept", "application/json".into())]),
        body: "MultipartFormData",
        file_form_name: "file",
        url: "{json:[0].url}",
        deletion_url: "{json:[0].delete_url}",
        // Refusals are one line of text whatever the Accept header says.
        error_message: "{response}",
    }
}

/// One line for a Flameshot hotkey (or any shell): capture a region, upload it, put the link on
/// the clipboard (`xclip`; `wl-copy` on Wayland).
pub fn flameshot_command(base_url: &str, token: &str) -> String {
    format!(
        "flameshot gui --raw | curl -sSf -H 'Authorization: Bearer {token}' -T - \
         \"{base_url}/screenshot-$(date +%Y%m%d-%H%M%S).png\" | xclip -selection clipboard"
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn the_uploader_file_has_the_fields_sharex_reads() {
        let json = serde_json::to_value(uploader("https://files.example.com", "T0K")).unwrap();
        assert_eq!(json["RequestURL"], "https://files.example.com/");
        assert_eq!(json["Name"], "blobdrop (files.example.com)");
        assert_eq!(json["Headers"]["Authorization"], "Bearer T0K");
        assert_eq!(json["DeletionURL"], "{json:[0].delete_url}");
        assert_eq!(json["Body"], "MultipartFormData");
    }
}
