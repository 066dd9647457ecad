"""A loss that needs a step's optional field (the critic's value, the reference log-probs) says so when it is missing."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the baselines need the train extra (torch)")

from rl4vlm_gym.baselines.common.algorithm import reference_logprobs, value_loss  # noqa: E402
from rl4vlm_gym.baselines.common.policy import Prompt  # noqa: E402
from rl4vlm_gym.baselines.common.storage import Step  # noqa: E402


def _step(tokens: int = 2, value: float | None = None, ref: list[float] | None = None) -> Step:
    return Step(
        env=0, episode=0, group=0, t=0, prompt=Prompt([]), response=[1] * tokens, text="", logprobs=torch.zeros(tokens),
        ref_logprobs=None if ref is None else torch.tensor(ref), value=value, ret=1.0,
    )  # fmt: skip


def test_value_loss_of_stored_values() -> None:
    batch = [_step(value=0.5), _step(value=1.5)]
    loss = value_loss(batch, torch.tensor([0.5, 1.5]), clip=0.2)
    assert loss.tolist() == pytest.approx([0.25, 0.25])  # (1 - 0.5)^2, (1 - 1.5)^2


@pytest.mark.parametrize("values, stored", [(None, (0.5, 1.5)), ([0.5, 1.5], (0.5, None))])
def test_value_loss_without_a_critic_says_so(values: list[float] | None, stored: tuple[float | None, ...]) -> None:
    batch = [_step(value=v) for v in stored]
    with pytest.raises(ValueError, match="needs a critic"):
        value_loss(batch, None if values is None else torch.tensor(values), clip=0.2)


def test_reference_logprobs_are_padded_rows() -> None:
    out = reference_logprobs([_step(ref=[-1.0]), _step(ref=[-2.0, -3.0])], width=3, device="cpu")
    assert out.tolist() == [[-1.0, 0.0, 0.0], [-2.0, -3.0, 0.0]]


def test_reference_logprobs_missing_on_one_step_says_so() -> None:
    with pytest.raises(ValueError, match="reference log-probs of every step"):
        reference_logprobs([_step(ref=[-1.0]), _step()], width=2, device="cpu")
