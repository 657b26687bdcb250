package kafka

// Classify exposes classify to the tests.
var Classify = classify
