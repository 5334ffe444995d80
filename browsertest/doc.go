// Package browsertest holds a test that opens the handler's interactive
// documentation page in a real browser, headless Chromium driven by
// chromedp, and uses it as a person would. It is a module of its own so
// that the root module never depends on chromedp.
//
// The test skips, saying why, when it finds no Chromium (set
// PETSTORE_CHROMIUM to its path, or install it with
// "apt-get install chromium"); under CI=true a missing browser fails it.
package browsertest
