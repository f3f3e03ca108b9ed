"""R-EVAL: golden sets (layer 1), regression replays (layer 2), graded agent tasks
(layer 3) and the regression gate over the development sets."""
