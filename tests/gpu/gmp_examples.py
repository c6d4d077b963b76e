"""The GMP profiler page's usage examples, as a user would paste them (no metric list given).

  python3 gmp_examples.py basic|memory|decorator|global
"""
import sys

import torch  # the page's examples use torch without importing it in every snippet

which = sys.argv[1]
if which == "basic":
    import gmp_python

    # Create and initialize profiler
    profiler = gmp_python.create_profiler()
    profiler.init()

    # Profile a range of operations
    with profiler.profile_range("my_operations"):
        # Your CUDA operations here
        import torch

        x = torch.randn(1000, 1000, device="cuda")
        y = torch.randn(1000, 1000, device="cuda")
        z = torch.matmul(x, y)

    # Print results
    profiler.print_profiler_ranges()
elif which == "memory":
    import gmp_python

    profiler = gmp_python.create_profiler()
    profiler.init()

    # Profile memory operations
    with profiler.profile_memory("memory_ops"):
        # Operations that allocate/deallocate memory
        large_tensor = torch.randn(5000, 5000, device="cuda")
        del large_tensor
        torch.cuda.empty_cache()

    # Print memory activity
    profiler.print_memory_activity()
elif which == "decorator":
    import gmp_python

    profiler = gmp_python.create_profiler()
    profiler.init()

    @profiler.profile_function("matrix_multiply")
    def my_function():
        x = torch.randn(1000, 1000, device="cuda")
        y = torch.randn(1000, 1000, device="cuda")
        return torch.matmul(x, y)

    result = my_function()
    profiler.print_profiler_ranges()
elif which == "global":
    import gmp_python

    # Initialize global profiler
    gmp_python.init_global_profiler()

    # Use global convenience functions
    with gmp_python.profile_range("operations"):
        # Your operations here
        x = torch.randn(1000, 1000, device="cuda")
        z = x @ x

    # Print results
    gmp_python.print_results()
