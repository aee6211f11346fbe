"""Fine-tuning BERT-base for sequence classification with transformers' Trainer on 2 GPUs (Trainer wraps the model
in DistributedDataParallel under torchrun), in Trainer's default precision (fp32), batch 32 x 128 tokens per GPU,
synthetic tokenised data. Run with: torchrun --standalone --nproc_per_node=2 program.py"""

import time

import torch
from torch.utils.data import Dataset
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainerCallback, TrainingArguments

WARMUP_STEPS, TIMED_STEPS = 10, 40


class SyntheticReviews(Dataset):
    """Tokenised text classification examples: 128 token ids, an attention mask, a label in 0..1."""

    def __init__(self, n, seq_len=128, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(1000, 30522, (n, seq_len), generator=g)
        self.ids[:, 0] = 101  # [CLS]
        self.labels = torch.randint(0, 2, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return {"input_ids": self.ids[i], "attention_mask": torch.ones_like(self.ids[i]), "labels": self.labels[i]}


class StepTimer(TrainerCallback):
    """Times the optimizer steps after the warm-up, synchronising once at each end."""

    def on_step_begin(self, args, state, control, **kwargs):
        if state.global_step == WARMUP_STEPS:
            torch.cuda.synchronize()
            self.start = time.perf_counter()

    def on_train_end(self, args, state, control, **kwargs):
        torch.cuda.synchronize()
        if args.process_index == 0:
            print(f"{(time.perf_counter() - self.start) * 1000 / TIMED_STEPS:.3f} ms/step")


def main():
    torch.manual_seed(0)
    model = BertForSequenceClassification(BertConfig(num_labels=2))
    args = TrainingArguments(
        output_dir="/tmp/bert-trainer",
        per_device_train_batch_size=32,
        max_steps=WARMUP_STEPS + TIMED_STEPS,
        learning_rate=2e-5,
        weight_decay=0.01,
        warmup_steps=5,
        logging_steps=1000,
        save_strategy="no",
        report_to="none",
        disable_tqdm=True,
    )
    trainer = Trainer(model=model, args=args, train_dataset=SyntheticReviews(4096), callbacks=[StepTimer()])
    result = trainer.train()
    if args.process_index == 0:
        print(f"train loss {result.training_loss:.4f}")


if __name__ == "__main__":
    main()
