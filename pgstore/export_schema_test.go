package pgstore

// SplitSearchPath is splitSearchPath, for the tests.
var SplitSearchPath = splitSearchPath

// SQLIdentifier is sqlIdentifier, for the tests.
var SQLIdentifier = sqlIdentifier
