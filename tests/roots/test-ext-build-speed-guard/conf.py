# build_speed registered before the guard that checks pages before they are
# read (tests/test_ext_build_speed.py): the pages it reads itself must have
# been checked all the same.
project = "speed"
extensions = ["kb.site.build_speed", "kb.guard.silent_loss"]
kb_parallel_threshold = 4
