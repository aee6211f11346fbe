"""Train a denoising diffusion model (DDPM) on 32x32 colour images in plain PyTorch, the way the popular
"annotated diffusion" style tutorials write it: a linear beta schedule of 1000 steps with its alphas, cumulative
products and square roots precomputed once on the GPU; an extract() helper that picks each sample's coefficients at
its timestep; q_sample() for the forward (noising) process; and a small UNet that predicts the noise: ResNet blocks
with GroupNorm and SiLU, a sinusoidal time embedding through an MLP added in every block, self-attention at the
lowest resolution, skip connections from the down path to the up path. Each step samples a timestep per image and
fresh noise, noises the batch, predicts the noise and takes an AdamW step on the MSE.

Random weights; the dataset is synthetic (4096 procedurally drawn pictures of a coloured disc or square on a
coloured background, scaled to [-1, 1]) and small enough to be held in device memory. A step of the clock is one
training step."""

import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
device = torch.device("cuda")

image_size, channels = 32, 3
batch_size = 128
timesteps = 1000


# ---------------------------------------------------------------------------------------------- the schedule


def linear_beta_schedule(timesteps):
    beta_start = 0.0001
    beta_end = 0.02
    return torch.linspace(beta_start, beta_end, timesteps)


betas = linear_beta_schedule(timesteps=timesteps).to(device)
alphas = 1.0 - betas
alphas_cumprod = torch.cumprod(alphas, dim=0)

# calculations for diffusion q(x_t | x_0)
sqrt_alphas_cumprod = torch.sqrt(alphas_cumprod)
sqrt_one_minus_alphas_cumprod = torch.sqrt(1.0 - alphas_cumprod)


def extract(a, t, x_shape):
    """The schedule's values at each sample's timestep, shaped to broadcast over its image."""
    batch_size = t.shape[0]
    out = a.gather(-1, t)
    return out.reshape(batch_size, *((1,) * (len(x_shape) - 1)))


def q_sample(x_start, t, noise):
    """Forward diffusion: x_t = sqrt(alpha_bar_t) x_0 + sqrt(1 - alpha_bar_t) noise."""
    sqrt_alphas_cumprod_t = extract(sqrt_alphas_cumprod, t, x_start.shape)
    sqrt_one_minus_alphas_cumprod_t = extract(sqrt_one_minus_alphas_cumprod, t, x_start.shape)
    return sqrt_alphas_cumprod_t * x_start + sqrt_one_minus_alphas_cumprod_t * noise


# ---------------------------------------------------------------------------------------------- the model


class SinusoidalPositionEmbeddings(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, time):
        half_dim = self.dim // 2
        embeddings = math.log(10000) / (half_dim - 1)
        embeddings = torch.exp(torch.arange(half_dim, device=time.device) * -embeddings)
        embeddings = time[:, None] * embeddings[None, :]
        return torch.cat((embeddings.sin(), embeddings.cos()), dim=-1)


class ResnetBlock(nn.Module):
    def __init__(self, dim, dim_out, time_emb_dim, groups=8):
        super().__init__()
        self.mlp = nn.Sequential(nn.SiLU(), nn.Linear(time_emb_dim, dim_out))
        self.norm1 = nn.GroupNorm(groups, dim)
        self.conv1 = nn.Conv2d(dim, dim_out, 3, padding=1)
        self.norm2 = nn.GroupNorm(groups, dim_out)
        self.conv2 = nn.Conv2d(dim_out, dim_out, 3, padding=1)
        self.res_conv = nn.Conv2d(dim, dim_out, 1) if dim != dim_out else nn.Identity()

    def forward(self, x, time_emb):
        h = self.conv1(F.silu(self.norm1(x)))
        h = h + self.mlp(time_emb)[:, :, None, None]
        h = self.conv2(F.silu(self.norm2(h)))
        return h + self.res_conv(x)


class Attention(nn.Module):
    """Multi-head self-attention over the feature map's pixels."""

    def __init__(self, dim, heads=4, dim_head=32):
        super().__init__()
        self.heads = heads
        hidden_dim = dim_head * heads
        self.norm = nn.GroupNorm(8, dim)
        self.to_qkv = nn.Linear(dim, hidden_dim * 3, bias=False)
        self.to_out = nn.Linear(hidden_dim, dim)

    def forward(self, x):
        b, c, h, w = x.shape
        tokens = self.norm(x).flatten(2).transpose(1, 2)                       # b, h*w, c
        qkv = self.to_qkv(tokens).reshape(b, h * w, 3, self.heads, -1)
        q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)                          # b, heads, h*w, dim_head
        out = F.scaled_dot_product_attention(q, k, v)
        out = self.to_out(out.transpose(1, 2).reshape(b, h * w, -1))
        return x + out.transpose(1, 2).reshape(b, c, h, w)


class Downsample(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


class Upsample(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.conv = nn.Conv2d(dim, dim, 3, padding=1)

    def forward(self, x):
        return self.conv(F.interpolate(x, scale_factor=2, mode="nearest"))


class Unet(nn.Module):
    def __init__(self, dim=64, dim_mults=(1, 2, 2), channels=3, num_res_blocks=2):
        super().__init__()
        time_dim = dim * 4
        self.time_mlp = nn.Sequential(
            SinusoidalPositionEmbeddings(dim),
            nn.Linear(dim, time_dim),
            nn.SiLU(),
            nn.Linear(time_dim, time_dim),
        )
        self.init_conv = nn.Conv2d(channels, dim, 3, padding=1)

        dims = [dim * m for m in dim_mults]
        self.downs = nn.ModuleList()
        skip_dims = [dim]
        now = dim
        for level, dim_out in enumerate(dims):
            for _ in range(num_res_blocks):
                self.downs.append(ResnetBlock(now, dim_out, time_dim))
                now = dim_out
                skip_dims.append(now)
            if level != len(dims) - 1:
                self.downs.append(Downsample(now))
                skip_dims.append(now)

        self.mid_block1 = ResnetBlock(now, now, time_dim)
        self.mid_attn = Attention(now)
        self.mid_block2 = ResnetBlock(now, now, time_dim)

        self.ups = nn.ModuleList()
        for level, dim_out in reversed(list(enumerate(dims))):
            for _ in range(num_res_blocks + 1):
                self.ups.append(ResnetBlock(now + skip_dims.pop(), dim_out, time_dim))
                now = dim_out
            if level != 0:
                self.ups.append(Upsample(now))

        self.final_norm = nn.GroupNorm(8, now)
        self.final_conv = nn.Conv2d(now, channels, 3, padding=1)

    def forward(self, x, time):
        t = self.time_mlp(time)
        x = self.init_conv(x)
        hs = [x]
        for layer in self.downs:
            x = layer(x, t) if isinstance(layer, ResnetBlock) else layer(x)
            hs.append(x)

        x = self.mid_block1(x, t)
        x = self.mid_attn(x)
        x = self.mid_block2(x, t)

        for layer in self.ups:
            if isinstance(layer, ResnetBlock):
                x = layer(torch.cat((x, hs.pop()), dim=1), t)
            else:
                x = layer(x)

        return self.final_conv(F.silu(self.final_norm(x)))


# ---------------------------------------------------------------------------------------------- the data


def make_shapes(n, size, generator):
    """n pictures of one disc or square of a random colour on a background of another, in [-1, 1]."""
    yy, xx = torch.meshgrid(torch.arange(size, dtype=torch.float32), torch.arange(size, dtype=torch.float32),
                            indexing="ij")
    cy, cx = (torch.rand(2, n, 1, 1, generator=generator) * (size - 8) + 4).unbind(0)
    r = torch.rand(n, 1, 1, generator=generator) * 8 + 4
    disc = (xx - cx) ** 2 + (yy - cy) ** 2 <= r ** 2
    square = ((xx - cx).abs() <= r * 0.8) & ((yy - cy).abs() <= r * 0.8)
    is_disc = torch.rand(n, 1, 1, generator=generator) < 0.5
    mask = torch.where(is_disc, disc, square).float()[:, None]
    fg = torch.rand(n, 3, 1, 1, generator=generator)
    bg = torch.rand(n, 3, 1, 1, generator=generator) * 0.6
    images = bg + (fg - bg) * mask
    return images * 2 - 1


dataset = make_shapes(4096, image_size, torch.Generator().manual_seed(0)).to(device)


def batches(data, batch_size):
    while True:
        perm = torch.randperm(len(data), device=device)
        for i in range(0, len(data) - batch_size + 1, batch_size):
            yield data[perm[i:i + batch_size]]


# ---------------------------------------------------------------------------------------------- training


model = Unet(dim=64, dim_mults=(1, 2, 2), channels=channels).to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=2e-4)
print(f"UNet with {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M parameters")


def p_losses(denoise_model, x_start, t):
    noise = torch.randn_like(x_start)
    x_noisy = q_sample(x_start=x_start, t=t, noise=noise)
    predicted_noise = denoise_model(x_noisy, t)
    return F.mse_loss(noise, predicted_noise)


def train_step(batch):
    optimizer.zero_grad()
    t = torch.randint(0, timesteps, (batch.shape[0],), device=device).long()
    loss = p_losses(model, batch, t)
    loss.backward()
    optimizer.step()
    return loss


data = batches(dataset, batch_size)
warmup, timed = 5, 30
for step in range(warmup):
    train_step(next(data))
torch.cuda.synchronize()

start = time.perf_counter()
for step in range(timed):
    loss = train_step(next(data))
    if step % 25 == 0:
        print(f"step {step} loss {loss.item():.4f}")
torch.cuda.synchronize()
elapsed = time.perf_counter() - start

print(f"{elapsed * 1000 / timed:.3f} ms/step")
