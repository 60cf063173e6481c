"""Testing layer shared by the GPU test suite and the evaluator.

grid        Scenario (one call, described completely), the batch-notation parser, the two grids of grid.md
randomized  small random scenarios per family, drawn from a printed seed (GPU tests)
inputs      fresh N(0,1) tensors and the exact kwargs of one call, as vLLM would pass them
reference   independent fp32 reference and FA3's same-dtype naive, per sequence
tolerance   FA3's relative rule, vLLM's absolute rule, LSE rule, a worst-element comparator
run         call_flashseek / check_scenario: inputs -> call -> reference -> tolerance

grid and tolerance's pure-Python parts import without torch, so CPU tooling and CI can use them.
"""
