"""Bad inputs to the JTCSE math (sentemb_lit.jtcse.losses, sentemb_lit.jtcse.cross_attention): every case must raise a
clear TypeError / ValueError whose message names the offending input; never a NaN result or a crash deep inside
torch."""
import math
import numpy as np
import pytest
import torch
from transformers import BertConfig, BertModel
from sentemb_lit.jtcse.cross_attention import (CAELConfig, attention_probabilities, check_towers, cls_energy,
                                         cross_attention_layer, cross_stream_step, extended_attention_mask,
                                         finish_layer, layer_attention, layer_values, lockstep_forward,
                                         plot_attention_sinks, self_attention_layer, weighted_context)
from sentemb_lit.jtcse.twin import TwinTowerEncoder
from sentemb_lit.jtcse.losses import (cross_info_nce, icnce, ictm_loss, info_nce, jtcse_loss, tmc_dynamic, tmc_loss,
                                tmc_loss_kt)

D = torch.float64


def rnd(*shape, seed=0):
    return torch.randn(*shape, dtype=D, generator=torch.Generator().manual_seed(seed))


X = rnd(6, 4)                        # a valid [2B, d] interleaved matrix (B = 3)
Y = rnd(6, 4, seed=1)
NAN = X.clone()
NAN[2, 1] = float("nan")
INF = X.clone()
INF[0, 0] = float("inf")


def bert(seed=0, **over):
    torch.manual_seed(seed)
    kw = dict(vocab_size=50, hidden_size=16, num_hidden_layers=4, num_attention_heads=2, intermediate_size=32,
              max_position_embeddings=32) | over
    return BertModel(BertConfig(**kw)).eval()


M1, M2 = bert(1), bert(2)
IDS = torch.tensor([[2, 7, 8, 9, 3, 0], [2, 11, 12, 13, 14, 3]])
AM = (IDS != 0).long()
LAY = M1.encoder.layer[0]
HID = torch.randn(2, 6, 16)
EXT = extended_attention_mask(AM)


class Tok:
    "One id per word, [CLS]=2, [SEP]=3, right padding with 0."
    def __call__(self, sents, padding=True, truncation=True, max_length=32, return_tensors="pt"):
        rows = [[2] + [4 + len(w) % 40 for w in s.split()][: max_length - 2] + [3] for s in sents]
        L = max(map(len, rows))
        ids = torch.tensor([r + [0] * (L - len(r)) for r in rows])
        return {"input_ids": ids, "attention_mask": (ids != 0).long()}

    def convert_ids_to_tokens(self, ids):
        return [f"t{int(i)}" for i in ids]


LOSS_CASES = {
    # tmc_loss (Eq. 1)
    "tmc_nan_h": (lambda: tmc_loss(NAN, Y), ValueError, r"^h contains NaN"),
    "tmc_inf_h_pos": (lambda: tmc_loss(X, INF), ValueError, r"^h_pos contains NaN or inf"),
    "tmc_integer_h": (lambda: tmc_loss(X.long(), Y.long()), TypeError, r"^h must be a floating-point"),
    "tmc_list_h_pos": (lambda: tmc_loss(X, [[1.0] * 4] * 6), TypeError, r"^h_pos must be a torch.Tensor"),
    "tmc_shape_mismatch": (lambda: tmc_loss(X, Y[:, :3]), ValueError, r"h and h_pos must have the same shape"),
    "tmc_dtype_mismatch": (lambda: tmc_loss(X, Y.float()), TypeError, r"h and h_pos must have the same dtype"),
    "tmc_scalar_h": (lambda: tmc_loss(torch.tensor(1.0), torch.tensor(2.0)), ValueError, r"^h must be at least 1-D"),
    "tmc_empty": (lambda: tmc_loss(X[:0], Y[:0]), ValueError, r"^h is empty"),
    "tmc_reduction": (lambda: tmc_loss(X, Y, reduction="max"), ValueError, r"^Unknown reduction .*; choose one of"),
    "tmc_eps_zero": (lambda: tmc_loss(X, Y, eps=0.0), ValueError, r"^eps must be a finite number"),
    "tmc_eps_str": (lambda: tmc_loss(X, Y, eps="1e-12"), ValueError, r"^eps must be a finite number > 0, got '1e-12'"),
    # tmc_loss_kt (Eq. 5)
    "kt_nan_k": (lambda: tmc_loss_kt(float("nan"), 0.5), ValueError, r"^k must be finite"),
    "kt_inf_t": (lambda: tmc_loss_kt(1.0, torch.tensor([0.0, math.inf])), ValueError, r"^t must be finite"),
    "kt_negative_k": (lambda: tmc_loss_kt(-0.5, 0.0), ValueError, r"^k = \|\|h\+\|\|/\|\|h\|\| must be >= 0"),
    "kt_t_above_1": (lambda: tmc_loss_kt(1.0, 1.2), ValueError, r"^t = cos\(gamma\) must lie in \[-1, 1\]"),
    "kt_string_k": (lambda: tmc_loss_kt("1", 0.0), TypeError, r"^k must be a real number or a tensor"),
    "kt_bool_t": (lambda: tmc_loss_kt(1.0, True), TypeError, r"^t must be a real number or a tensor"),
    "kt_complex_t": (lambda: tmc_loss_kt(1.0, torch.tensor([0.5j])), TypeError, r"^t must be a real-valued tensor"),
    # info_nce (Eq. 11)
    "nce_temperature_zero": (lambda: info_nce(X, temperature=0), ValueError, r"^temperature must be a finite number"),
    "nce_temperature_neg": (lambda: info_nce(X, temperature=-0.05), ValueError, r"^temperature must be a finite"),
    "nce_temperature_nan": (lambda: info_nce(X, temperature=float("nan")),
                            ValueError, r"^temperature must be a finite"),
    "nce_temperature_inf": (lambda: info_nce(X, temperature=math.inf), ValueError, r"^temperature must be a finite"),
    "nce_temperature_str": (lambda: info_nce(X, temperature="0.05"), ValueError,
                            r"^temperature must be a finite number"),
    "nce_temperature_bool": (lambda: info_nce(X, temperature=True), ValueError,
                             r"^temperature must be a finite number > 0, got True"),
    "nce_temperature_tensor": (lambda: info_nce(X, temperature=torch.tensor(0.05)), ValueError, r"^temperature must"),
    "nce_odd_rows": (lambda: info_nce(X[:5]), ValueError, r"^z1 has 5 rows"),
    "nce_one_row": (lambda: info_nce(X[:1]), ValueError, r"^z1 has 1 rows"),
    "nce_1d": (lambda: info_nce(X[0]), ValueError, r"^z1 must be 2-D"),
    "nce_3d": (lambda: info_nce(X[None]), ValueError, r"^z1 must be 2-D"),
    "nce_nan": (lambda: info_nce(NAN), ValueError, r"^z1 contains NaN"),
    "nce_int": (lambda: info_nce(X.int()), TypeError, r"^z1 must be a floating-point"),
    "nce_views_mismatch": (lambda: info_nce(X, Y[:4]), ValueError, r"z1 and z2 must have the same shape"),
    "nce_b_needs_z2": (lambda: info_nce(X, layout="b"), ValueError, r"layout='b' .* needs both views z1 and z2"),
    "nce_layout": (lambda: info_nce(X, layout="4b"), ValueError, r"^Unknown layout .*; choose one of"),
    "nce_reduction": (lambda: info_nce(X, reduction=None), ValueError, r"^Unknown reduction .*; choose one of"),
    # cross_info_nce / icnce (Eq. 12)
    "xnce_inf_y_b": (lambda: cross_info_nce(X, INF), ValueError, r"^y_b contains NaN or inf"),
    "xnce_mask_flag": (lambda: cross_info_nce(X, Y, mask_same_copy="yes"), TypeError, r"^mask_same_copy must be True"),
    "xnce_odd": (lambda: cross_info_nce(X[:3], Y[:3]), ValueError, r"^y_a has 3 rows"),
    "icnce_R_two": (lambda: icnce(X, Y, R=2), ValueError, r"^R must be 1 .*got 2"),
    "icnce_R_bool": (lambda: icnce(X, Y, R=True), ValueError, r"^R must be .*got True"),
    "icnce_R_str": (lambda: icnce(X, Y, R="random"), ValueError, r"^R must be .*got 'random'"),
    "icnce_one_cross": (lambda: icnce(X, Y, c1=X), ValueError, r"pass both cross outputs c1 and c2"),
    "icnce_cross_rows": (lambda: icnce(X, Y, X[:4], Y[:4]), ValueError, r"^c1 must have the same number of rows as l1"),
    "icnce_cross_nan": (lambda: icnce(X, Y, NAN, Y), ValueError, r"^c1 contains NaN"),
    "icnce_generator": (lambda: icnce(X, Y, generator=0), TypeError, r"^generator must be a torch.Generator"),
    "icnce_l2_int": (lambda: icnce(X, Y.long()), TypeError, r"^l2 must be a floating-point"),
    # tmc_dynamic / ictm_loss (Eq. 13-14)
    "ictm_pooler_rows": (lambda: ictm_loss(X, Y, X[:4], Y[:4]), ValueError, r"same number of rows, got l1 6 and p1 4"),
    "ictm_p2_nan": (lambda: ictm_loss(X, Y, X, NAN), ValueError, r"^p2 contains NaN"),
    "ictm_unknown_option": (lambda: ictm_loss(X, Y, X, Y, reduction="none"),
                            TypeError, r"unknown ICTM option.*reduction"),
    "ictm_negative_cos": (lambda: ictm_loss(X, Y, X, Y, negative_cos="abs"),
                          ValueError, r"^Unknown negative_cos .*; choose one of"),
    "ictm_cos_source": (lambda: ictm_loss(X, Y, X, Y, cos_source="mean"), ValueError,
                        r"^Unknown cos_source .*; choose one of"),
    "ictm_clamp_zero": (lambda: ictm_loss(X, Y, X, Y, clamp_value=0.0), ValueError, r"^clamp_value must be a finite"),
    "ictm_clamp_above_1": (lambda: ictm_loss(X, Y, X, Y, clamp_value=2.0), ValueError, r"^clamp_value .*\(0, 1.0\]"),
    "ictm_soft_delta_nan": (lambda: ictm_loss(X, Y, X, Y, soft_delta=float("nan")), ValueError, r"^soft_delta must"),
    "ictm_half_int": (lambda: tmc_dynamic(X, Y, X, Y, half=1), TypeError, r"^half must be True or False"),
    "tmcdyn_l_b_shape": (lambda: tmc_dynamic(X, Y[:, :2], X, Y), ValueError, r"l_a and l_b must have the same shape"),
    # jtcse_loss (Eq. 15)
    "jtcse_no_pooler": (lambda: jtcse_loss(X, Y), ValueError, r"'ictm' term needs the pooler outputs p1 and p2"),
    "jtcse_preset": (lambda: jtcse_loss(X, Y, X, Y, terms="nce+ictn"), ValueError, r"unknown terms preset 'nce\+ictn'"),
    "jtcse_term": (lambda: jtcse_loss(X, Y, X, Y, terms=["nce", "tmc"]),
                   ValueError, r"unknown loss term.*'tmc'.*terms"),
    "jtcse_terms_type": (lambda: jtcse_loss(X, Y, X, Y, terms=3), TypeError, r"^terms must be a preset name"),
    "jtcse_weights_key": (lambda: jtcse_loss(X, Y, X, Y, weights={"cae": 1}), ValueError, r"^weights has unknown term"),
    "jtcse_weights_nan": (lambda: jtcse_loss(X, Y, X, Y, weights={"nce": math.nan}), ValueError, r"^weights\['nce'\]"),
    "jtcse_weights_type": (lambda: jtcse_loss(X, Y, X, Y, weights=[1.0]), TypeError, r"^weights must be a dict"),
    "jtcse_ictm_kw": (lambda: jtcse_loss(X, Y, X, Y, halve=True), TypeError, r"unknown ICTM option.*halve"),
    "jtcse_nce_layout": (lambda: jtcse_loss(X, Y, terms="nce", nce_layout="bb"), ValueError, r"^Unknown nce_layout"),
    "jtcse_temperature": (lambda: jtcse_loss(X, Y, X, Y, temperature=0), ValueError, r"^temperature must be a finite"),
    "jtcse_R_ignored_term": (lambda: jtcse_loss(X, Y, X, Y, terms="nce", R=5), ValueError, r"^R must be"),
    "jtcse_c2_inf": (lambda: jtcse_loss(X, Y, X, Y, X, INF, R=1), ValueError, r"^c2 contains NaN or inf"),
    "jtcse_l1_odd": (lambda: jtcse_loss(X[:5], Y[:5], terms="nce"), ValueError, r"^l1 has 5 rows"),
}

CAEL_CASES = {
    "cael_k_zero": (lambda: CAELConfig(0), ValueError, r"CAEL interval k must be a positive int"),
    "cael_k_float": (lambda: CAELConfig(2.0), TypeError, r"CAEL interval k must be a positive int"),
    "cael_k_bool": (lambda: CAELConfig(True), TypeError, r"CAEL interval k must be a positive int.*True"),
    "cael_k_str": (lambda: CAELConfig("2"), TypeError, r"CAEL interval k must be a positive int.*'2'"),
    "cael_injection": (lambda: CAELConfig(2, injection="replace"), ValueError, r"unknown injection 'replace'"),
    "cael_expose": (lambda: CAELConfig(2, expose="first"), ValueError, r"unknown expose 'first'"),
    "cael_k_not_divisor": (lambda: CAELConfig(3).layers(4), ValueError, r"k=3 must divide the number of layers \(4\)"),
    "cael_k_too_big": (lambda: lockstep_forward(M1, M2, IDS, AM, cael_k=8), ValueError, r"k=8 must divide"),
    "lock_cael_type": (lambda: lockstep_forward(M1, M2, IDS, AM, cael={"k": 2}),
                       TypeError, r"cael must be a CAELConfig"),
    "lock_cael_both": (lambda: lockstep_forward(M1, M2, IDS, AM, cael_k=2, cael=CAELConfig(2)), ValueError,
                       r"either cael=.* or cael_k"),
    "lock_tower2_linear": (lambda: lockstep_forward(M1, torch.nn.Linear(2, 2), IDS, AM), TypeError,
                           r"^tower_2 must be a BERT-family encoder"),
    "lock_tower1_none": (lambda: lockstep_forward(None, M2, IDS, AM), TypeError, r"^tower_1 must be a BERT-family"),
    "lock_towers_config": (lambda: check_towers(M1, bert(3, num_hidden_layers=2)), ValueError,
                           r"tower_1 and tower_2 differ in .*num_hidden_layers"),
    "lock_towers_dtype": (lambda: check_towers(M1, bert(3).double()), ValueError, r"tower_2 .*torch.float64"),
    "lock_decoder": (lambda: check_towers(bert(1, is_decoder=True), M2),
                     ValueError, r"^tower_1 is configured as a decoder"),
    "lock_ids_float": (lambda: lockstep_forward(M1, M2, IDS.float(), AM), TypeError, r"^input_ids must be an integer"),
    "lock_ids_list": (lambda: lockstep_forward(M1, M2, IDS.tolist(), AM), TypeError, r"^input_ids must be an integer"),
    "lock_ids_1d": (lambda: lockstep_forward(M1, M2, IDS[0], AM[0]),
                    ValueError, r"^input_ids must be a non-empty \[B, L\]"),
    "lock_ids_empty": (lambda: lockstep_forward(M1, M2, IDS[:0], AM[:0]),
                       ValueError, r"^input_ids must be a non-empty"),
    "lock_ids_vocab": (lambda: lockstep_forward(M1, M2, IDS + 100, AM),
                       ValueError, r"^input_ids must lie in \[0, 50\)"),
    "lock_ids_negative": (lambda: lockstep_forward(M1, M2, IDS - 5, AM), ValueError, r"^input_ids must lie in"),
    "lock_ids_too_long": (lambda: lockstep_forward(M1, M2, torch.ones(1, 64, dtype=torch.long)), ValueError,
                          r"^input_ids: sequence length 64 exceeds"),
    "lock_mask_shape": (lambda: lockstep_forward(M1, M2, IDS, AM[:, :3]), ValueError,
                        r"^attention_mask must have the same shape as input_ids"),
    "lock_mask_float_nan": (lambda: lockstep_forward(M1, M2, IDS, AM.float() * math.nan), TypeError,
                            r"^attention_mask must be an integer"),
    "lock_mask_values": (lambda: lockstep_forward(M1, M2, IDS, AM * 2),
                         ValueError, r"attention_mask must contain only"),
    "lock_mask_all_padding": (lambda: lockstep_forward(M1, M2, IDS, AM * 0),
                              ValueError, r"attention_mask .*all padding"),
    "lock_token_types_shape": (lambda: lockstep_forward(M1, M2, IDS, AM, AM[:1]),
                               ValueError, r"^token_type_ids must have"),
    "lock_token_types_range": (lambda: lockstep_forward(M1, M2, IDS, AM, AM * 7), ValueError,
                               r"^token_type_ids must lie in \[0, 2\)"),
    "lock_flag": (lambda: lockstep_forward(M1, M2, IDS, AM, output_attentions=1), TypeError,
                  r"^output_attentions must be True or False"),
    "mask_1d": (lambda: extended_attention_mask(AM[0]), TypeError, r"^attention_mask must be a \[B, L\]"),
    "probs_layer_type": (lambda: attention_probabilities(M1, HID, EXT), TypeError, r"^layer must be a BERT/RoBERTa"),
    "probs_hidden_width": (lambda: attention_probabilities(LAY, HID[..., :8], EXT), ValueError,
                           r"^hidden must have shape \[B, L, 16\]"),
    "probs_hidden_int": (lambda: attention_probabilities(LAY, IDS, EXT),
                         TypeError, r"^hidden must be a floating-point"),
    "probs_ext_mask": (lambda: attention_probabilities(LAY, HID, AM),
                       ValueError, r"^ext_mask must be the \[B, 1, 1, L\]"),
    "values_hidden_2d": (lambda: layer_values(LAY, HID[0]), ValueError, r"^hidden must have shape"),
    "context_mismatch": (lambda: weighted_context(torch.rand(2, 2, 6, 6), torch.rand(2, 2, 5, 8)), ValueError,
                         r"probs .* and values .* do not match"),
    "context_values_type": (lambda: weighted_context(torch.rand(2, 2, 6, 6), None), TypeError, r"^values must be"),
    "finish_context_shape": (lambda: finish_layer(LAY, HID[:, :3], HID), ValueError, r"^context must have shape"),
    "self_layer_ext": (lambda: self_attention_layer(LAY, HID, EXT[:1]), ValueError, r"^ext_mask must be"),
    "cross_other_layer": (lambda: cross_attention_layer(LAY, HID, "layer", HID, EXT), TypeError, r"^other_layer must"),
    "cross_other_hidden": (lambda: cross_attention_layer(LAY, HID, LAY, HID[..., :4], EXT), ValueError,
                           r"^other_hidden must have shape"),
    "stream_pair": (lambda: cross_stream_step(LAY, (HID, HID), EXT, True), TypeError, r"^layers must be a pair"),
    "stream_is_cael": (lambda: cross_stream_step((LAY, LAY), (HID, HID), EXT, 1), TypeError, r"^is_cael must be True"),
    "twin_cael_type": (lambda: TwinTowerEncoder(M1, M2, Tok(), cael=2), TypeError, r"^cael must be a "),
    "twin_k_not_divisor": (lambda: TwinTowerEncoder(M1, M2, Tok(), cael=CAELConfig(3)), ValueError, r"k=3 must divide"),
    "twin_same_tower": (lambda: TwinTowerEncoder(M1, M1, Tok(), cael=CAELConfig(1)), ValueError, r"same object"),
    "layer_attention_model": (lambda: layer_attention("bert", IDS, AM), TypeError, r"^model must be a BERT-family"),
    "energy_kind": (lambda: cls_energy(M1, Tok(), ["a b"], kind="energy"), ValueError, r"unknown kind 'energy'"),
    "energy_batch_size": (lambda: cls_energy(M1, Tok(), ["a b"], batch_size=0),
                          ValueError, r"^batch_size must be a positive int"),
    "energy_batch_size_float": (lambda: cls_energy(M1, Tok(), ["a b"], batch_size=2.5),
                                ValueError, r"^batch_size must"),
    "energy_max_length": (lambda: cls_energy(M1, Tok(), ["a b"], max_length=1),
                          ValueError, r"^max_length must be an int"),
    "energy_tokenizer": (lambda: cls_energy(M1, None, ["a b"]), TypeError, r"^tokenizer must be a callable"),
    "energy_sentences_str": (lambda: cls_energy(M1, Tok(), "a b"), TypeError, r"^sentences must be a list of strings"),
    "energy_sentences_empty": (lambda: cls_energy(M1, Tok(), []), ValueError, r"^sentences is empty"),
    "energy_show_progress": (lambda: cls_energy(M1, Tok(), ["a b"], show_progress="no"), TypeError, r"^show_progress"),
    "plot_layer_zero": (lambda: plot_attention_sinks(M1, Tok(), "a b", layers=[0]), ValueError, r"^layers must be"),
    "plot_layer_bool": (lambda: plot_attention_sinks(M1, Tok(), "a b", layers=[True]), ValueError, r"^layers must"),
    "plot_layers_empty": (lambda: plot_attention_sinks(M1, Tok(), "a b", layers=[]), ValueError, r"^layers must be a"),
    "plot_ncols": (lambda: plot_attention_sinks(M1, Tok(), "a b", ncols=0), ValueError,
                   r"^ncols must be a positive int"),
    "plot_sentence_empty": (lambda: plot_attention_sinks(M1, Tok(), "  "), ValueError, r"^sentence\[0\] is an empty"),
    "plot_sentence_type": (lambda: plot_attention_sinks(M1, Tok(), 3), TypeError, r"^sentence\[0\] is int"),
}


@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_losses_bad_input(case):
    call, exc, pattern = LOSS_CASES[case]
    with pytest.raises(exc, match=pattern):
        call()


@pytest.mark.parametrize("case", sorted(CAEL_CASES))
def test_cross_attention_bad_input(case):
    call, exc, pattern = CAEL_CASES[case]
    with pytest.raises(exc, match=pattern):
        call()


@pytest.mark.parametrize("value", [np.float64(0.05), np.float32(0.1), 1])
def test_numpy_and_int_temperatures_accepted(value):
    "Real numbers of any kind are fine (the check is about meaning, not Python type)."
    assert torch.isfinite(info_nce(X, temperature=value))
