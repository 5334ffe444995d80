// Package browsertest holds the tests that run the handler in a real
// browser, headless Chromium driven by chromedp: one opens the interactive
// documentation page and uses it as a person would, one calls the API with
// fetch from a page of another origin, through the CORS middleware that the
// README shows. It is a module of its own so that the root module never
// depends on chromedp.
//
// The tests skip, saying why, when it finds no Chromium (set
// PETSTORE_CHROMIUM to its path, or install it with
// "apt-get install chromium"); under CI=true a missing browser fails it.
package browsertest
