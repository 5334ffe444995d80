// Package otelpetstore records OpenTelemetry traces and metrics of a
// petstore handler, following the semantic conventions for HTTP servers so
// that existing dashboards understand them: a server span per request,
// named by operation (listPets, createPet, getPet) and continuing the
// caller's trace, the http.server.request.duration histogram by route,
// method, status and error, and a petstore.deprecated.requests counter that
// tells who still calls a deprecated operation.
//
// It takes the host's providers and propagator, the global ones by default,
// and registers nothing globally itself.
//
// Typical usage:
//
//	tel, err := otelpetstore.New(
//		otelpetstore.WithMeterProvider(meterProvider),
//		otelpetstore.WithTracerProvider(tracerProvider),
//		otelpetstore.WithPropagator(propagation.TraceContext{}),
//	)
//	if err != nil {
//		return err
//	}
//	api, err := petstore.New(
//		petstore.WithStore(store),
//		petstore.WithAuthenticator(petstore.APIKeys(key)),
//		petstore.WithObserver(tel.Observe),
//	)
//	if err != nil {
//		return err
//	}
//	http.Handle("/", tel.Middleware(api))
//
// Observe alone, without Middleware, records the metrics but no span.
package otelpetstore
