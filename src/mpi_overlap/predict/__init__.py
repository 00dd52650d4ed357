"""Predicting by replay: a traced run's MPI calls replayed on a model of another network or
MPI setting, its computation kept as recorded (docs/method.md, "Predicting by replay")."""
