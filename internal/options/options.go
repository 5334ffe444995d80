// Package options applies functional options, the same way in every
// module: each option in turn, every mistake kept, a nil option one of them.
package options

import "errors"

// Apply applies each of opts to c with apply, and returns every mistake
// joined in one error, a nil option among them.
func Apply[O comparable, C any](c *C, opts []O, apply func(O, *C) error) error {
	var (
		errs []error
		none O
	)
	for _, o := range opts {
		if o == none {
			errs = append(errs, errors.New("an option is nil; remove it"))
			continue
		}
		if err := apply(o, c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
