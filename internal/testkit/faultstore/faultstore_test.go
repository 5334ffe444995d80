package faultstore_test

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/petstore-go/petstore"
	"github.com/petstore-go/petstore/internal/testkit/faultstore"
	"github.com/petstore-go/petstore/memstore"
)

// call calls method m of s once, by its name, and returns its error: the
// arguments are ctx, a valid pet, the ID 1 (the pet that newStore adds) and
// zero options, so that a new method of petstore.Store needs no case here.
func call(ctx context.Context, s *faultstore.Store, m faultstore.Method) error {
	f := reflect.ValueOf(s).MethodByName(string(m))
	var args []reflect.Value
	for i := range f.Type().NumIn() {
		switch in := f.Type().In(i); in {
		case reflect.TypeFor[context.Context]():
			args = append(args, reflect.ValueOf(ctx))
		case reflect.TypeFor[petstore.NewPet]():
			args = append(args, reflect.ValueOf(petstore.NewPet{Name: "Rex", CategoryID: 1}))
		case reflect.TypeFor[int64]():
			args = append(args, reflect.ValueOf(int64(1)))
		default:
			args = append(args, reflect.Zero(in))
		}
	}
	out := f.Call(args)
	err, _ := out[len(out)-1].Interface().(error)
	return err
}

// newStore returns a Store around a memstore that holds one pet.
func newStore(t *testing.T) (*faultstore.Store, *memstore.Store) {
	t.Helper()
	inner := memstore.New()
	if _, _, err := inner.Add(context.Background(), petstore.NewPet{Name: "first", CategoryID: 1}, petstore.AddOptions{}); err != nil {
		t.Fatal(err)
	}
	return faultstore.New(inner), inner
}

// methods returns every method of a Store.
func methods() []faultstore.Method { return faultstore.Methods() }

// TestMethodsAreTheStores checks that Methods names every method of
// petstore.Store, each once, so that growing the Store interface fails here
// until the new method gets its fault.
func TestMethodsAreTheStores(t *testing.T) {
	var want []string
	store := reflect.TypeFor[petstore.Store]()
	for i := range store.NumMethod() {
		want = append(want, store.Method(i).Name)
	}
	var got []string
	for _, m := range faultstore.Methods() {
		got = append(got, string(m))
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("faultstore.Methods (-the methods of petstore.Store +Methods):\n%s", diff)
	}
}

func TestNoFaultCallsTheWrappedStore(t *testing.T) {
	s, inner := newStore(t)
	p, _, err := s.Add(context.Background(), petstore.NewPet{Name: "Rex", CategoryID: 2}, petstore.AddOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(context.Background(), p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got); diff != "" {
		t.Errorf("Get (-added +got):\n%s", diff)
	}
	list, err := s.List(context.Background(), petstore.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || inner.Len() != 2 {
		t.Errorf("List returned %d pets and the wrapped store holds %d, want 2 and 2", len(list), inner.Len())
	}
	if _, err := s.Get(context.Background(), 99); !errors.Is(err, petstore.ErrNotFound) {
		t.Errorf("Get of a missing pet: %v, want ErrNotFound", err)
	}
}

func TestErrIsReturnedWithoutCallingTheWrappedStore(t *testing.T) {
	for _, m := range methods() {
		t.Run(string(m), func(t *testing.T) {
			s, inner := newStore(t)
			s.Set(m, faultstore.Fault{Err: petstore.ErrUnavailable})
			if err := call(context.Background(), s, m); !errors.Is(err, petstore.ErrUnavailable) {
				t.Errorf("err = %v, want ErrUnavailable", err)
			}
			if inner.Len() != 1 {
				t.Errorf("the wrapped store holds %d pets, want 1", inner.Len())
			}
			if got := s.Calls(m); got != 1 {
				t.Errorf("Calls = %d, want 1", got)
			}
		})
	}
}

func TestTimesHeals(t *testing.T) {
	for _, m := range methods() {
		t.Run(string(m), func(t *testing.T) {
			s, _ := newStore(t)
			s.Set(m, faultstore.Fault{Err: petstore.ErrUnavailable, Times: 2})
			var got []bool
			for range 4 {
				got = append(got, errors.Is(call(context.Background(), s, m), petstore.ErrUnavailable))
			}
			if diff := cmp.Diff([]bool{true, true, false, false}, got); diff != "" {
				t.Errorf("failed calls (-want +got):\n%s", diff)
			}
			if got := s.Calls(m); got != 4 {
				t.Errorf("Calls = %d, want 4", got)
			}
		})
	}
}

func TestSetZeroFaultRemovesIt(t *testing.T) {
	s, _ := newStore(t)
	s.Set(faultstore.Get, faultstore.Fault{Err: errors.New("broken")})
	s.Set(faultstore.Get, faultstore.Fault{})
	if err := call(context.Background(), s, faultstore.Get); err != nil {
		t.Errorf("err = %v, want nil", err)
	}
}

func TestPanic(t *testing.T) {
	for _, m := range methods() {
		t.Run(string(m), func(t *testing.T) {
			s, inner := newStore(t)
			s.Set(m, faultstore.Fault{Panic: "boom", Err: errors.New("not reached")})
			func() {
				defer func() {
					if v := recover(); v != "boom" {
						t.Errorf("recovered %v, want boom", v)
					}
				}()
				_ = call(context.Background(), s, m)
				t.Error("no panic")
			}()
			if inner.Len() != 1 {
				t.Errorf("the wrapped store holds %d pets, want 1", inner.Len())
			}
		})
	}
}

func TestDelayEndsWithTheContext(t *testing.T) {
	for _, m := range methods() {
		t.Run(string(m), func(t *testing.T) {
			s, inner := newStore(t)
			s.Set(m, faultstore.Fault{Delay: time.Hour})
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			if err := call(ctx, s, m); !errors.Is(err, context.Canceled) {
				t.Errorf("err = %v, want one wrapping context.Canceled", err)
			}
			if inner.Len() != 1 {
				t.Errorf("the wrapped store holds %d pets, want 1", inner.Len())
			}
		})
	}
}

func TestDelayThenCall(t *testing.T) {
	s, inner := newStore(t)
	s.Set(faultstore.Add, faultstore.Fault{Delay: time.Millisecond})
	if err := call(context.Background(), s, faultstore.Add); err != nil {
		t.Fatal(err)
	}
	if inner.Len() != 2 {
		t.Errorf("the wrapped store holds %d pets, want 2", inner.Len())
	}
}

func TestTotalCalls(t *testing.T) {
	s, _ := newStore(t)
	for _, m := range methods() {
		_ = call(context.Background(), s, m)
	}
	_ = call(context.Background(), s, faultstore.Get)
	if got, want := s.TotalCalls(), len(methods())+1; got != want {
		t.Errorf("TotalCalls = %d, want %d", got, want)
	}
	if got := s.Calls(faultstore.Get); got != 2 {
		t.Errorf("Calls(Get) = %d, want 2", got)
	}
}
