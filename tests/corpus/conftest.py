import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture(scope="session")
def ray_runtime():
    """One real local Ray runtime (2 CPUs, no dashboard) for the whole session: its GCS address."""
    import ray

    ray.init(num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
