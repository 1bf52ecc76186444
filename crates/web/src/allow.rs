//! A resource's methods, named once (by the route table): its routes, and the `Allow` header of every 405 it answers.

use actix_web::dev::ServiceResponse;
use actix_web::http::Method;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpRequest, Route, web};

/// The methods of the resource that answered, as its 405s name them (RFC 9110: a 405 lists them
/// in `Allow`). Resource data, so the error handler finds it on the request.
#[derive(Clone, Debug)]
struct Allowed(HeaderValue);

/// `web::resource(paths)` with each route under its method: the route gets the method's guard,
/// and a method none of them takes gets a 405 whose `Allow` lists them, in this order.
pub fn resource(paths: impl actix_router::IntoPatterns, routes: Vec<(Method, Route)>) -> actix_web::Resource {
    let names: Vec<&str> = routes.iter().map(|(method, _)| method.as_str()).collect();
    let mut resource = web::resource(paths);
    // Method names are tokens, always a valid header value.
    if let Ok(value) = HeaderValue::from_str(&names.join(", ")) {
        resource = resource.app_data(Allowed(value));
    }
    routes.into_iter().fold(resource, |resource, (method, route)| resource.route(route.method(method)))
}

/// The `Allow` value of the resource that took this request, if it named its methods.
fn allowed(req: &HttpRequest) -> Option<HeaderValue> {
    req.app_data::<Allowed>().map(|allowed| allowed.0.clone())
}

/// Adds `Allow` to a 405 answer of a resource made by [`resource`] (the error handler calls this).
pub fn add_allow_header<B>(res: &mut ServiceResponse<B>) {
    if let Some(value) = allowed(res.request()) {
        res.headers_mut().insert(header::ALLOW, value);
    }
}
