package pgstore

// QueuedAdds returns the number of calls of Add on s that wait for a batch,
// not yet taken into one.
func QueuedAdds(s *Store) int {
	n, _ := s.adds.Waiting()
	return n
}

// Channel returns the channel on which s notifies its adds.
func Channel(s *Store) string { return channelOf(s.relation) }

// SplitSearchPath and SQLIdentifier are splitSearchPath and sqlIdentifier,
// for the tests.
var SplitSearchPath, SQLIdentifier = splitSearchPath, sqlIdentifier
