"""The bridge's memory roles on sharded tensors, with real torch.distributed on the CPU (gloo, one rank):
FSDP2's fully_shard turns parameters into DTensors, which have no storage of their own; the bridge reads the
local shard's."""

import os
import unittest

import torch
import torch.distributed as dist

from gpuscope_torch import memory


class ShardedTensors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
        os.environ.setdefault("MASTER_PORT", "29517")
        dist.init_process_group("gloo", rank=0, world_size=1)

    @classmethod
    def tearDownClass(cls):
        dist.destroy_process_group()

    def test_dtensor_is_read_through_its_local_shard(self):
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.tensor import Shard, distribute_tensor

        mesh = init_device_mesh("cpu", (1,))
        full = torch.arange(12.0).reshape(4, 3)
        sharded = distribute_tensor(full, mesh, [Shard(0)])
        with self.assertRaises(RuntimeError):  # what the bridge hit on FSDP2 parameters
            sharded.untyped_storage().data_ptr()
        local = memory.local_tensor(sharded)
        self.assertEqual(local.untyped_storage().nbytes(), full.numel() * 4)
        self.assertTrue(torch.equal(local, full))
        self.assertEqual(local.untyped_storage().data_ptr(), sharded.to_local().untyped_storage().data_ptr())

    def test_fully_shard_parameters_and_plain_tensors(self):
        from torch.distributed.fsdp import fully_shard

        model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
        fully_shard(model)
        for p in model.parameters():
            local = memory.local_tensor(p)
            self.assertGreater(local.untyped_storage().nbytes(), 0)
            self.assertIsNotNone(local.untyped_storage().data_ptr())
        plain = torch.ones(3)
        self.assertIs(memory.local_tensor(plain), plain)


if __name__ == "__main__":
    unittest.main()
