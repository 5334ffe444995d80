// Starts Swagger UI on the OpenAPI document that the handler serves beside
// this page. Both references are relative: the page is {base}/docs, so
// "openapi.json" is {base}/openapi.json under any base path or host prefix.
"use strict";
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    // No request leaves the host: no online validator badge.
    validatorUrl: null,
    // Keep the key typed into Authorize for the life of the tab only.
    persistAuthorization: false,
  });
});
